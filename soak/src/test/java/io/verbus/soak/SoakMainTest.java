package io.verbus.soak;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./verbus soak} in small: the real processes, kill cycles and fuzzing for a few seconds. A soak that cannot
 * fail proves nothing, so the second case makes the publisher lose, repeat, swap and corrupt one message each.
 */
@Tag("slow")
class SoakMainTest
{
    @TempDir
    Path dir;

    @Test
    void shouldPassAShortSoakAndCountEveryCategory()
    {
        final ByteArrayOutputStream text = new ByteArrayOutputStream();
        // A 300 ms shm liveness: killed subscribers' devices are stale for the sweep 3 s after the last kill, not 10.
        final SoakSummary summary = run(text, "--seconds", "6", "--providers", "shm,tcp", "--subscribers", "1",
            "--shm-liveness-ms", "300",
            "--kill-interval-ms", "1000-2000", "--fuzz-rate", "300", "--fuzz-threads", "2",
            "--rates-tcp", "3000,1000,500,500");
        assertPassed(summary, text.toString(StandardCharsets.UTF_8));
    }

    /**
     * The same with every channel on commit=imm (the position rides a WRITE_WITH_IMM: what commit=auto picks on RDMA
     * hardware), so the receive credits and the status they ride on go through kill cycles too. Both ends ask for
     * imm, so a stream that flowed at all ran on it (a mismatch is refused at the handshake).
     */
    @Test
    void shouldPassAShortSoakWithTheImmediateCommit()
    {
        final ByteArrayOutputStream text = new ByteArrayOutputStream();
        final SoakSummary summary = run(text, "--seconds", "6", "--providers", "shm,tcp", "--subscribers", "1",
            "--commit", "imm", "--shm-liveness-ms", "300",
            "--kill-interval-ms", "1000-2000", "--fuzz-rate", "100", "--fuzz-threads", "1",
            "--rates-tcp", "3000,1000,500,500");
        final String printed = text.toString(StandardCharsets.UTF_8);
        assertTrue(printed.contains("commit=imm"), printed);
        assertPassed(summary, printed);
    }

    private static void assertPassed(final SoakSummary summary, final String printed)
    {
        assertEquals(0, summary.exitCode(), printed);
        assertTrue(printed.contains("result: PASSED"), printed);
        for (final ProviderSoak soak : summary.providers)
        {
            assertTrue(soak.published > 0 && soak.publishedBytes > 0, soak.provider + "\n" + printed);
            assertTrue(soak.subscriberTotals[ProviderSoak.RECEIVED] >= soak.published, soak.provider + "\n" + printed);
            assertTrue(soak.killCycles > 0, soak.provider + " kill cycles\n" + printed);
            assertTrue(soak.fuzzer.fuzzed.get() > 0 && soak.fuzzer.rejected.get() > 0, soak.provider + "\n" + printed);
            assertEquals(soak.fuzzer.fuzzed.get(), soak.fuzzer.rejected.get() + soak.fuzzer.closed.get() +
                soak.fuzzer.abandoned.get(), "only attempts that ran to an outcome count\n" + printed);
            assertTrue(soak.fdStart > 0 && soak.fdEnd > 0, printed);
        }
        assertEquals(0, summary.total(ProviderSoak.LOST) + summary.total(ProviderSoak.DUPLICATED) +
            summary.total(ProviderSoak.REORDERED) + summary.total(ProviderSoak.CORRUPT), printed);
        assertEquals(0, summary.crashes() + summary.leakedFds() + summary.leftFiles.size() + summary.stalls() +
            summary.fuzzFailures(), printed);
    }

    @Test
    void shouldFailAndCountEachInjectedFault()
    {
        final ByteArrayOutputStream text = new ByteArrayOutputStream();
        final SoakSummary summary = run(text, "--seconds", "3", "--providers", "shm", "--subscribers", "1",
            "--kill-interval-ms", "0", "--fuzz-rate", "0",
            "--inject", "lost@1000,duplicate@2000,reorder@3000,corrupt@4000");
        final String printed = text.toString(StandardCharsets.UTF_8);

        assertEquals(1, summary.exitCode(), printed);
        assertEquals(1, summary.total(ProviderSoak.LOST), printed);
        assertEquals(1, summary.total(ProviderSoak.DUPLICATED), printed);
        assertEquals(1, summary.total(ProviderSoak.REORDERED), printed);
        assertEquals(1, summary.total(ProviderSoak.CORRUPT), printed);
        assertTrue(printed.contains("result: FAILED: 1 lost messages; 1 duplicated messages; 1 reordered messages; " +
            "1 corrupt messages"), printed);
    }

    private SoakSummary run(final ByteArrayOutputStream text, final String... args)
    {
        final String[] withDir = new String[args.length + 2];
        System.arraycopy(args, 0, withDir, 0, args.length);
        withDir[args.length] = "--dir";
        withDir[args.length + 1] = dir.toString();
        final PrintStream out = new PrintStream(text, true, StandardCharsets.UTF_8);
        final SoakSummary summary = new SoakMain(SoakOptions.parse(withDir), out).run();
        System.out.print(text.toString(StandardCharsets.UTF_8));
        return summary;
    }
}
