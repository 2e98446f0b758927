package io.verbus.fabric.conformance;

import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A peer in a child JVM running {@link PeerMain}, started with this JVM's class path and the flags in
 * etc/jvm.args, optionally behind a command prefix such as {@code ip netns exec <ns>}.
 */
public final class ChildProcessPeer implements ConformancePeer
{
    private final Process process;
    private final BufferedReader in;
    private final PrintStream out;

    /**
     * @param prefix   command words before java (e.g. ip netns exec ns), may be empty.
     * @param provider fabric provider name.
     * @param shmDirectory shm directory shared with the initiator.
     * @param tcpAddress address the peer's tcp device listens on.
     * @param livenessTimeoutNs shm liveness timeout.
     */
    public ChildProcessPeer(
        final List<String> prefix,
        final String provider,
        final Path shmDirectory,
        final String tcpAddress,
        final long livenessTimeoutNs)
    {
        final List<String> command = new ArrayList<>(prefix);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmFlags());
        command.add("-Xmx256m");
        command.add("-XX:+UseSerialGC");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(PeerMain.class.getName());
        command.add(provider);
        command.add(shmDirectory.toString());
        command.add(tcpAddress);
        command.add(Long.toString(livenessTimeoutNs));
        try
        {
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot start peer JVM: " + command, ex);
        }
        in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        out = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        final String ready = readResult();
        if (!"ready".equals(ready))
        {
            throw new IllegalStateException("peer JVM did not start: " + ready);
        }
    }

    /**
     * @return the flags in etc/jvm.args found from the working directory upwards, else the minimum FFM needs.
     */
    static List<String> jvmFlags()
    {
        Path dir = Path.of("").toAbsolutePath();
        while (null != dir)
        {
            final Path args = dir.resolve("etc").resolve("jvm.args");
            if (Files.isRegularFile(args))
            {
                try
                {
                    final List<String> flags = new ArrayList<>();
                    for (final String line : Files.readAllLines(args))
                    {
                        if (!line.isBlank() && !line.startsWith("#"))
                        {
                            flags.add(line.trim());
                        }
                    }
                    return flags;
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException(ex);
                }
            }
            dir = dir.getParent();
        }
        return List.of("--enable-native-access=ALL-UNNAMED",
            "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED");
    }

    private synchronized String call(final String command)
    {
        if (!process.isAlive())
        {
            throw new IllegalStateException("peer JVM is dead, cannot run: " + command);
        }
        out.println(command);
        return readResult();
    }

    private String readResult()
    {
        try
        {
            String line;
            while (null != (line = in.readLine()))
            {
                if (line.startsWith("R "))
                {
                    return line.substring(2);
                }
                if (line.startsWith("E "))
                {
                    throw new IllegalStateException("peer failed: " + line.substring(2));
                }
            }
            throw new IllegalStateException("peer JVM closed its output, exit " + exitCodeOrRunning());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private String exitCodeOrRunning()
    {
        try
        {
            return process.waitFor(2, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "(running)";
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return "(interrupted)";
        }
    }

    @Override
    public QueuePairConnectionInfo createQueuePair(final int receiveDepth)
    {
        return PeerMain.decode(call("qp " + receiveDepth).split(" "), 0);
    }

    @Override
    public void connect(final QueuePairConnectionInfo initiator)
    {
        call("connect " + PeerMain.encode(initiator));
    }

    @Override
    public Region register(final int length, final int accessFlags)
    {
        final String[] w = call("register " + length + " " + accessFlags).split(" ");
        return new Region(Integer.parseInt(w[0]), Long.parseLong(w[1]), Integer.parseInt(w[2]), Long.parseLong(w[3]));
    }

    @Override
    public void deregister(final int regionId)
    {
        call("deregister " + regionId);
    }

    @Override
    public byte[] read(final int regionId, final long offset, final int length)
    {
        return Base64.getDecoder().decode(call("read " + regionId + " " + offset + " " + length));
    }

    @Override
    public void write(final int regionId, final long offset, final byte[] bytes)
    {
        call("write " + regionId + " " + offset + " " + Base64.getEncoder().encodeToString(bytes));
    }

    @Override
    public int postReceive(final long wrId, final int regionId, final long offset, final int length)
    {
        return Integer.parseInt(call("postrecv " + wrId + " " + regionId + " " + offset + " " + length));
    }

    @Override
    public List<Completion> pollReceive(final int count, final long timeoutMs)
    {
        final String[] w = call("pollrecv " + count + " " + timeoutMs).split(" ");
        final List<Completion> completions = new ArrayList<>();
        for (int i = 1; i < w.length; i++)
        {
            final String[] f = w[i].split(",");
            completions.add(new Completion(Long.parseLong(f[0]), WorkCompletionStatus.valueOf(f[1]),
                WorkCompletionOpcode.valueOf(f[2]), Integer.parseInt(f[3]), Integer.parseInt(f[4]),
                Boolean.parseBoolean(f[5])));
        }
        return completions;
    }

    @Override
    public QueuePairState state()
    {
        return QueuePairState.valueOf(call("state"));
    }

    @Override
    public void destroyQueuePair()
    {
        if (process.isAlive())
        {
            call("destroy");
        }
    }

    @Override
    public void kill()
    {
        process.destroyForcibly();
        try
        {
            process.waitFor(10, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isAlive()
    {
        return process.isAlive();
    }

    @Override
    public void close()
    {
        if (process.isAlive())
        {
            try
            {
                call("exit");
                process.waitFor(10, TimeUnit.SECONDS);
            }
            catch (final RuntimeException | InterruptedException ex)
            {
                process.destroyForcibly();
            }
            finally
            {
                if (process.isAlive())
                {
                    process.destroyForcibly();
                }
            }
        }
    }
}
