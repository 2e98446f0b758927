package io.verbus.fabric.tcp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Two network namespaces made for one test run, joined by a veth pair with addresses in 10.200.0.0/16 that
 * exist only inside them; names are unique per run; {@link #close()} deletes both (and with them the veth).
 * A thread enters one with {@link #enter(String)} (setns affects only the calling thread; threads it starts
 * inherit the namespace, so a tcp device opened there has its NIC thread and sockets inside).
 */
final class NetworkNamespacePair implements AutoCloseable
{
    private static final int CLONE_NEWNET = 0x40000000;
    private static final int O_RDONLY = 0;

    final String namespaceA;
    final String namespaceB;
    final String addressA;
    final String addressB;
    private final List<String> created = new ArrayList<>();

    private NetworkNamespacePair()
    {
        final String id = Long.toHexString(ProcessHandle.current().pid()) +
            Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0x10000));
        namespaceA = "vbfa" + id;
        namespaceB = "vbfb" + id;
        final int subnet = ThreadLocalRandom.current().nextInt(0, 256);
        final int host = ThreadLocalRandom.current().nextInt(0, 64) * 4;
        addressA = "10.200." + subnet + "." + (host + 1);
        addressB = "10.200." + subnet + "." + (host + 2);
    }

    /**
     * @return null if this process can create namespaces, else why not.
     */
    static String unavailableReason()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("Uid:") && !line.split("\\s+")[1].equals("0"))
                {
                    return "not running as root: creating network namespaces and a veth pair needs root " +
                        "(CI runs as root)";
                }
            }
        }
        catch (final IOException ex)
        {
            return "cannot read /proc/self/status: " + ex;
        }
        if (!Files.isExecutable(Path.of("/usr/sbin/ip")) && !Files.isExecutable(Path.of("/sbin/ip")))
        {
            return "the ip command (iproute2) is not installed";
        }
        return null;
    }

    static NetworkNamespacePair create()
    {
        deleteLeftoversOfDeadRuns();
        final NetworkNamespacePair pair = new NetworkNamespacePair();
        try
        {
            final String vethA = "vbv" + pair.namespaceA.substring(4, Math.min(pair.namespaceA.length(), 15));
            final String vethB = "vbw" + pair.namespaceB.substring(4, Math.min(pair.namespaceB.length(), 15));
            pair.ip("netns", "add", pair.namespaceA);
            pair.created.add(pair.namespaceA);
            pair.ip("netns", "add", pair.namespaceB);
            pair.created.add(pair.namespaceB);
            pair.ip("link", "add", vethA, "netns", pair.namespaceA, "type", "veth",
                "peer", "name", vethB, "netns", pair.namespaceB);
            pair.ip("-n", pair.namespaceA, "addr", "add", pair.addressA + "/30", "dev", vethA);
            pair.ip("-n", pair.namespaceB, "addr", "add", pair.addressB + "/30", "dev", vethB);
            pair.ip("-n", pair.namespaceA, "link", "set", vethA, "up");
            pair.ip("-n", pair.namespaceB, "link", "set", vethB, "up");
            pair.ip("-n", pair.namespaceA, "link", "set", "lo", "up");
            pair.ip("-n", pair.namespaceB, "link", "set", "lo", "up");
            return pair;
        }
        catch (final RuntimeException ex)
        {
            pair.close();
            throw ex;
        }
    }

    /**
     * Namespaces are named vbf(a|b)(pid hex)(4 hex digits): delete those whose creating process is gone
     * (a run killed before its clean-up).
     */
    private static void deleteLeftoversOfDeadRuns()
    {
        try
        {
            final Process list = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
            final String output = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            list.waitFor(30, TimeUnit.SECONDS);
            for (final String line : output.split("\n"))
            {
                final String name = line.trim().split(" ")[0];
                if (name.matches("vbf[ab][0-9a-f]+[0-9a-f]{4}"))
                {
                    final long pid = Long.parseLong(name.substring(4, name.length() - 4), 16);
                    if (ProcessHandle.of(pid).map(process -> !process.isAlive()).orElse(true))
                    {
                        new ProcessBuilder("ip", "netns", "del", name).start().waitFor(30, TimeUnit.SECONDS);
                    }
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            System.err.println("could not sweep leftover test namespaces: " + ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private void ip(final String... args)
    {
        final List<String> command = new ArrayList<>();
        command.add("ip");
        command.addAll(List.of(args));
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0)
            {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output.trim());
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot run " + command + ": " + ex, ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command, ex);
        }
    }

    /**
     * Move the calling thread into a namespace of this pair.
     */
    @SuppressWarnings("restricted")
    static void enter(final String namespace)
    {
        final Linker linker = Linker.nativeLinker();
        final MethodHandle open = linker.downcallHandle(linker.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2));
        final MethodHandle setns = linker.downcallHandle(linker.defaultLookup().find("setns").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        final MethodHandle close = linker.downcallHandle(linker.defaultLookup().find("close").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment path = arena.allocateFrom("/var/run/netns/" + namespace);
            final int fd = (int)open.invokeExact(path, O_RDONLY);
            if (fd < 0)
            {
                throw new IllegalStateException("cannot open /var/run/netns/" + namespace);
            }
            final int result = (int)setns.invokeExact(fd, CLONE_NEWNET);
            final int ignored = (int)close.invokeExact(fd);
            if (result != 0)
            {
                throw new IllegalStateException("setns into " + namespace + " failed");
            }
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close()
    {
        for (final String namespace : created)
        {
            try
            {
                ip("netns", "del", namespace);
            }
            catch (final RuntimeException ex)
            {
                System.err.println("could not delete network namespace " + namespace + ": " + ex.getMessage());
            }
        }
        created.clear();
    }
}
