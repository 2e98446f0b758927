package io.verbus.media.rdma;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A buffer or {@code Header} the application kept from a poll of an {@code rdma:} subscription stays readable after
 * the subscription and Verbus are closed: the ring under it is quarantined (private zero pages at the same
 * addresses), not unmapped. Run in a child JVM, since the failure mode is a SIGSEGV.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaUseAfterCloseTest
{
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldNeverFaultThroughAKeptHeaderAfterClose(final String provider) throws Exception
    {
        final List<String> command = new ArrayList<>(PeerProcesses.javaCommand(
            RdmaUseAfterCloseMain.class, "use-after-close-secret-0123456789", dir.resolve("fabric")));
        command.addAll(List.of(dir.toString(), provider));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final boolean exited = process.waitFor(90, TimeUnit.SECONDS);
        if (!exited)
        {
            process.destroyForcibly();
        }
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(exited, output);
        assertEquals(0, process.exitValue(), output);
        assertTrue(output.contains("STEP polled: 5eedf00d"), output);
        assertTrue(output.contains("STEP kept buffer after the subscription's close: read "), output);
        assertTrue(output.contains("STEP kept header after Verbus.close: term offset "), output);
        assertTrue(output.contains("DONE"), output);
    }
}
