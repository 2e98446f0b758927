package io.verbus.tuning;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TuneMainTest
{
    @TempDir
    Path root;

    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    private final List<String> executed = new ArrayList<>();
    private final List<List<String>> toolsRun = new ArrayList<>();

    private int run(final String... args)
    {
        // The "live" host here is a fake too, so nothing in these tests can read or touch the real machine.
        final TuneMain.Environment env = new TuneMain.Environment(
            FakeHost.noRdmaHost(root.resolve("live")).fs(),
            (command) ->
            {
                toolsRun.add(command);
                return Optional.empty();
            },
            (command) ->
            {
                executed.add(command);
                return 0;
            },
            true);
        return TuneMain.run(args, new PrintStream(stdout, true, StandardCharsets.UTF_8),
            new PrintStream(stderr, true, StandardCharsets.UTF_8), env);
    }

    private String out()
    {
        return stdout.toString(StandardCharsets.UTF_8);
    }

    private String err()
    {
        return stderr.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldExitZeroWithoutFailuresAndPrintOneLinePerItem()
    {
        final FakeHost host = FakeHost.noRdmaHost(root.resolve("vm"));

        assertEquals(0, run("check", "--root", host.root().toString()));

        final String[] lines = out().split("\n");
        assertTrue(lines[0].startsWith("# verbus tune check: host " + host.root() + " (fake tree)"), out());
        assertTrue(lines[lines.length - 1].startsWith("summary: "), out());
        assertTrue(lines[lines.length - 1].endsWith("0 FAIL, 7 N/A (exit 0)"), out());
        for (int i = 1; i < lines.length - 1; i++)
        {
            assertTrue(lines[i].matches("(OK  |WARN|FAIL|N/A ) \\S+ +.* -> fix: .+"), lines[i]);
        }
        assertEquals(List.of(), toolsRun, "no host tool runs against a fake tree");
    }

    @Test
    void shouldExitOneWhenAnyLineFails()
    {
        final FakeHost host = FakeHost.badHost(root.resolve("bad"));

        assertEquals(HostReport.EXIT_FAIL, run("check", "--root", host.root().toString(), "--cpus", "2-3"));
        assertTrue(out().contains("FAIL mem.memlock"), out());
        assertTrue(out().contains("FAIL rdma.preferred"), out());
    }

    @Test
    void shouldSayWhatTheRingSizeAssumptionWas()
    {
        final FakeHost host = FakeHost.noRdmaHost(root.resolve("vm"));

        run("check", "--root", host.root().toString(), "--term-length", "64m", "--subscribers", "4");
        assertTrue(out().contains("768 MiB (assumed term-length 64m x 3 partitions x 4 subscribers)"), out());

        stdout.reset();
        run("check", "--root", host.root().toString(), "--ring-bytes", "4m");
        assertTrue(out().contains("OK   mem.memlock            8 MiB vs rings' 4 MiB (assumed --ring-bytes 4m)"),
            out());
    }

    @Test
    void shouldUseTheLiveHostAndItsToolsWithoutRoot()
    {
        assertEquals(0, run("check", "--jvm-flags", "-Xms1g -Xmx1g -XX:+AlwaysPreTouch"));

        assertTrue(out().contains("OK   jvm.flags              --jvm-flags: -Xms1g -Xmx1g -XX:+AlwaysPreTouch"), out());
        assertFalse(out().contains("(fake tree)"));

        stdout.reset();
        run("check", "--jvm-flags", "--enable-preview -Xmx1g");
        assertTrue(out().contains("--jvm-flags: -Xmx1g (+1 module/access flags); missing -XX:+AlwaysPreTouch -Xms1g"),
            out());
    }

    @Test
    void shouldNotRunToolsWithNoTools()
    {
        final FakeHost live = FakeHost.badHost(root.resolve("live-bad"));
        final TuneMain.Environment env = new TuneMain.Environment(live.fs(),
            (command) ->
            {
                toolsRun.add(command);
                return Optional.empty();
            },
            (command) -> 0, false);
        final PrintStream out = new PrintStream(stdout, true, StandardCharsets.UTF_8);

        TuneMain.run(new String[]{ "check", "--no-tools" }, out, out, env);
        assertEquals(List.of(), toolsRun);

        TuneMain.run(new String[]{ "check" }, out, out, env);
        assertTrue(toolsRun.contains(List.of("ethtool", "--show-eee", "ens1f0")), toolsRun::toString);
    }

    @Test
    void shouldApplyAsDryRunByDefaultThroughTheCommandLine()
    {
        final FakeHost host = FakeHost.badHost(root.resolve("bad"));
        final Map<String, String> before = host.snapshot();

        assertEquals(0, run("apply", "--root", host.root().toString()));

        assertEquals(List.of(), executed);
        assertEquals(before, host.snapshot());
        assertTrue(out().contains("dry run, nothing is changed"), out());
    }

    @Test
    void shouldRunCommandsOnlyWithYes()
    {
        final FakeHost host = FakeHost.badHost(root.resolve("bad"));

        assertEquals(0, run("apply", "--yes", "--root", host.root().toString()));

        assertTrue(executed.contains("ip link set dev ens1f0 up"), executed::toString);
    }

    @Test
    void shouldRejectBadCommandLinesNamingTheProblem()
    {
        assertUsageError("unknown flag '--bogus'", "check", "--bogus");
        assertUsageError("flag '--cpus': not a CPU number: 'x'", "check", "--cpus", "1,x");
        assertUsageError("flag '--ring-bytes' needs a value", "check", "--ring-bytes");
        assertUsageError("flag '--ring-bytes': not a size 'lots'", "check", "--ring-bytes", "lots");
        assertUsageError("--term-length must be a power of two", "check", "--term-length", "3m");
        assertUsageError("flag '--subscribers' must be positive: 0", "check", "--subscribers", "0");
        assertUsageError("give --ring-bytes or --term-length/--subscribers, not both",
            "check", "--ring-bytes", "1m", "--subscribers", "2");
        assertUsageError("--yes only goes with apply", "check", "--yes");
        assertUsageError("unknown command 'fix'", "fix");
        assertUsageError("missing command", "--no-tools");
        assertUsageError("preset needs a name", "preset");
        assertUsageError("host root is not a directory", "check", "--root", root.resolve("nowhere").toString());
    }

    @Test
    void shouldPrintUsageForHelp()
    {
        assertEquals(0, run("--help"));
        assertTrue(out().contains("Usage: ./verbus tune <command>"), out());
        assertTrue(out().contains("Exit status: 0 when no line is FAIL, 1 when any is"), out());
    }

    @Test
    void shouldDescribeAPresetByNameAndRejectUnknownOnes()
    {
        assertEquals(0, run("preset", "low-latency", "--cpus", "1"));
        assertTrue(out().contains("idle strategy      busy-spin"), out());
        assertTrue(out().contains("sender CPU         1"), out());
        assertTrue(out().contains("receiver CPU       not pinned"), out());
        assertTrue(out().contains("rdma channels      provider=auto on this host"), out());

        assertEquals(TuneMain.EXIT_USAGE, run("preset", "fast"));
        assertTrue(err().contains("unknown preset 'fast': expected one of [low-latency, default]"), err());
    }

    private void assertUsageError(final String message, final String... args)
    {
        stderr.reset();
        assertEquals(TuneMain.EXIT_USAGE, run(args), () -> String.join(" ", args));
        assertTrue(err().contains(message), () -> "expected '" + message + "' in: " + err());
    }
}
