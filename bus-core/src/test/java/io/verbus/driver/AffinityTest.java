package io.verbus.driver;

import io.verbus.TestSupport;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.BitSet;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AffinityTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldFailClearlyWhenPinningToACpuThatDoesNotExist()
    {
        final int missingCpu = Affinity.onlineCpus().length() + 64;
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> Verbus.launch(TestSupport.context(tempDir).threadingMode(ThreadingMode.DEDICATED)
                .senderCpu(missingCpu)));
        assertTrue(ex.getMessage().contains("senderCpu=" + missingCpu), ex.getMessage());
        assertTrue(ex.getMessage().contains("CPU " + missingCpu + " does not exist"), ex.getMessage());
        assertTrue(ex.getMessage().contains("online CPUs are"), ex.getMessage());

        assertThrows(IllegalArgumentException.class, () -> Affinity.pinCurrentThread(-5));
        assertThrows(IllegalArgumentException.class, () -> Affinity.pinCurrentThread(missingCpu));
    }

    @Test
    void shouldPinAThreadToOneCpuWithSchedSetaffinity() throws Exception
    {
        final BitSet allowed = Affinity.allowedCpus();
        final int cpu = allowed.nextSetBit(0);
        final AtomicReference<BitSet> pinned = new AtomicReference<>();
        final Thread thread = new Thread(() ->
        {
            Affinity.pinCurrentThread(cpu);
            pinned.set(Affinity.allowedCpus());
        });
        thread.start();
        thread.join(10_000);
        final BitSet expected = new BitSet();
        expected.set(cpu);
        assertEquals(expected, pinned.get());
        assertEquals(allowed, Affinity.allowedCpus(), "only the pinned thread changed");
    }

    @Test
    void shouldStartDedicatedAgentThreadsPinnedToTheirCpus()
    {
        final int cpu = Affinity.allowedCpus().nextSetBit(0);
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).threadingMode(ThreadingMode.DEDICATED)
            .conductorCpu(cpu).senderCpu(cpu).receiverCpu(cpu)))
        {
            final var subscription = verbus.addSubscription("ipc", 1);
            final var publication = verbus.addPublication("ipc", 1);
            TestSupport.await("connected", publication::isConnected);
            assertEquals(1, subscription.imageCount());

            // The kernel's view: each agent thread (comm "verbus-...") may run on the pinned CPU only.
            final java.util.List<String> allowed = new java.util.ArrayList<>();
            try (java.util.stream.Stream<Path> tasks = java.nio.file.Files.list(Path.of("/proc/self/task")))
            {
                for (final Path task : tasks.toList())
                {
                    final String comm = java.nio.file.Files.readString(task.resolve("comm")).trim();
                    if (comm.startsWith("verbus-"))
                    {
                        allowed.add(java.nio.file.Files.readAllLines(task.resolve("status")).stream()
                            .filter(line -> line.startsWith("Cpus_allowed_list:"))
                            .map(line -> line.substring(line.indexOf(':') + 1).trim())
                            .findFirst().orElse("?"));
                    }
                }
            }
            catch (final java.io.IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
            assertEquals(java.util.List.of(String.valueOf(cpu), String.valueOf(cpu), String.valueOf(cpu)), allowed);
        }
    }

    @Test
    void shouldParseKernelCpuLists()
    {
        final BitSet cpus = Affinity.parseCpuList("0-2,5,7-8");
        assertEquals("{0, 1, 2, 5, 7, 8}", cpus.toString());
    }
}
