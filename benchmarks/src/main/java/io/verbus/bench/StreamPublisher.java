package io.verbus.bench;

/**
 * The sending end of a one-way stream, owned by the publisher thread.
 */
public interface StreamPublisher
{
    /**
     * @param length of the message in bytes.
     * @return true when sent, false when back-pressured (retry).
     */
    boolean send(int length);

    /**
     * Work the publisher thread owes the stream after its last send, while the subscriber catches up: a stream
     * whose driver runs in invoker mode on this thread is only flushed if its duty cycle keeps running.
     *
     * @return the amount of work done, 0 when idle.
     */
    default int flush()
    {
        return 0;
    }

    /**
     * The publisher thread's duty cycle while it has nothing to send, as an application runs it between bursts: in
     * invoker mode its driver's {@code invoke()}, and nothing that would itself push the stream (no flush). What a
     * stream needs from it to send the end of a burst is what {@link BurstTailRunner} measures.
     *
     * @return the amount of work done, 0 when idle.
     */
    default int idle()
    {
        return flush();
    }
}
