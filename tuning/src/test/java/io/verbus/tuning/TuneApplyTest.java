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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TuneApplyTest
{
    @TempDir
    Path root;

    private final List<String> executed = new ArrayList<>();
    private final ByteArrayOutputStream output = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);

    private HostReport badReport(final FakeHost host)
    {
        return HostReport.run(new CheckContext(
            host.fs(), FakeHost.badHostTools(), RingSizing.defaults(), CpuSet.parse("2-3"), JvmFlags.of("-Xmx4g")));
    }

    private int recordingExecutor(final String command)
    {
        executed.add(command);
        return 0;
    }

    private String printed()
    {
        return output.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldChangeNothingAndRunNothingInDryRun()
    {
        final FakeHost host = FakeHost.badHost(root);
        final Map<String, String> before = host.snapshot();
        final TuneApply apply = new TuneApply(badReport(host), this::recordingExecutor, true);

        final int exit = apply.run(false, out);

        assertEquals(TuneApply.EXIT_OK, exit);
        assertEquals(List.of(), executed, "a dry run executes nothing, even as root");
        assertEquals(before, host.snapshot(), "a dry run leaves every file as it was");
        final String text = printed();
        assertTrue(text.contains("dry run, nothing is changed"), text);
        assertTrue(text.contains("would run with --yes; nothing was changed"), text);
        for (final String command : apply.plannedCommands())
        {
            assertTrue(text.contains("\n" + command + "\n"), () -> "dry run does not print " + command + "\n" + text);
        }
    }

    @Test
    void shouldPrintEveryCategoryOfFixTheIssueNames()
    {
        final TuneApply apply = new TuneApply(badReport(FakeHost.badHost(root)), this::recordingExecutor, false);

        final List<String> commands = apply.plannedCommands();

        assertTrue(
            commands.contains("echo 24 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"), commands::toString);
        assertTrue(commands.contains(CpuGovernorCheck.FIX_COMMAND), commands::toString);
        assertTrue(commands.contains("for i in 120 121; do echo 0-1 > /proc/irq/$i/smp_affinity_list; done"),
            commands::toString);
        assertTrue(commands.contains("ethtool --set-eee ens1f0 eee off"), commands::toString);
        assertTrue(commands.contains("ip link set dev ens1f0 mtu 9000"), commands::toString);
    }

    @Test
    void shouldListManualStepsAsCommentsSoThePlanCanBePipedToSh()
    {
        new TuneApply(badReport(FakeHost.badHost(root)), this::recordingExecutor, false).run(false, out);

        final String text = printed();
        assertTrue(text.contains("# manual: echo '* - memlock unlimited'"), text);
        assertTrue(text.contains("# manual: sed -i 's/^GRUB_CMDLINE_LINUX=\"/&isolcpus=2-3 /'"), text);
        for (final String line : text.split("\n"))
        {
            assertFalse(line.startsWith("sed ") || line.startsWith("dcb "),
                () -> "a manual step must not be runnable by sh: " + line);
        }
    }

    @Test
    void shouldRefuseYesWithoutRootAndRunNothing()
    {
        final TuneApply apply = new TuneApply(badReport(FakeHost.badHost(root)), this::recordingExecutor, false);

        assertEquals(TuneApply.EXIT_NOT_ROOT, apply.run(true, out));
        assertEquals(List.of(), executed);
        assertTrue(printed().contains("needs root: nothing was run"), printed());
    }

    @Test
    void shouldRunExactlyThePlannedCommandsInOrderWithYesAsRoot()
    {
        final TuneApply apply = new TuneApply(badReport(FakeHost.badHost(root)), this::recordingExecutor, true);

        assertEquals(TuneApply.EXIT_OK, apply.run(true, out));
        assertEquals(apply.plannedCommands(), executed);
        assertFalse(executed.isEmpty());
        assertTrue(executed.stream().noneMatch((command) -> command.contains("GRUB") || command.contains("limits.d")),
            "reboot and re-login fixes are never run");
    }

    @Test
    void shouldReportFailedCommandsWithExitStatusOne()
    {
        final TuneApply apply = new TuneApply(badReport(FakeHost.badHost(root)),
            (command) -> command.startsWith("ethtool") ? 75 : 0, true);

        assertEquals(TuneApply.EXIT_COMMAND_FAILED, apply.run(true, out));
        assertTrue(printed().contains("ethtool --set-eee ens1f0 eee off\n# -> FAILED with exit status 75"), printed());
        assertTrue(printed().contains(", 1 failed."), printed());
    }

    @Test
    void shouldHaveNothingToRunOnWellTunedHost()
    {
        final FakeHost host = FakeHost.goodHost(root);
        final HostReport report = HostReport.run(new CheckContext(host.fs(), FakeHost.goodHostTools(),
            RingSizing.defaults(), CpuSet.parse("2-3"), FakeHost.goodJvmFlags()));
        final TuneApply apply = new TuneApply(report, this::recordingExecutor, true);

        assertEquals(TuneApply.EXIT_OK, apply.run(true, out));
        assertEquals(List.of(), executed);
        assertTrue(printed().contains("nothing to run"), printed());
    }
}
