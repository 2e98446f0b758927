package io.verbus.tools;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.WorkCompletion;

/**
 * Reaping the signaled WRITEs of the latency tools: any completion but success ends the measurement.
 */
final class WriteCompletions
{
    private WriteCompletions()
    {
    }

    /**
     * @return how many signaled WRITEs completed (all successfully).
     * @throws IllegalStateException on the first failed one.
     */
    static int reap(final CompletionQueue cq, final WorkCompletion[] completions)
    {
        final int polled = cq.poll(completions, completions.length);
        for (int i = 0; i < polled; i++)
        {
            if (!completions[i].isSuccess())
            {
                throw new IllegalStateException("WRITE failed: " + completions[i]);
            }
        }
        return polled;
    }
}
