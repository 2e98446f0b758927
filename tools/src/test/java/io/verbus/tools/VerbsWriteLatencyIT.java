package io.verbus.tools;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs {@link VerbsWriteLatency} on the device (in the Soft-RoCE guest, in the same JVM as the conformance
 * suite) and records its figure beside perftest's. Asserts that every round trip completed, never a latency.
 */
// The guest runs the classes in this order: the latency loop warms the JIT on the post/poll path first.
@Order(1)
class VerbsWriteLatencyIT
{
    static final String RESULTS_PROP_NAME = "verbus.softroce.results";

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void shouldCompleteEveryInlineWritePingPongAndRecordTheFigure() throws IOException
    {
        final int iterations = Integer.getInteger("verbus.softroce.latency.iterations", 5_000);
        // A long warm-up: under an emulated CPU the JIT needs seconds to compile the post/poll path with C2.
        final int warmup = Integer.getInteger("verbus.softroce.latency.warmup", 30_000);
        final VerbsWriteLatency.Result result = VerbsWriteLatency.run(iterations, warmup, 64);

        assertEquals(iterations, result.halfRoundTripNs().length);
        assertTrue(result.halfRoundTripNs()[0] > 0);
        assertTrue(result.percentileNs(50) <= result.percentileNs(99));
        final String summary = result.summary();
        System.out.println(summary);
        final String results = System.getProperty(RESULTS_PROP_NAME, "");
        if (!results.isEmpty())
        {
            Files.writeString(Path.of(results, "verbus_write_lat.txt"), summary + System.lineSeparator());
        }
    }
}
