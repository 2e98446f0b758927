package io.verbus.media.rdma;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A peer JVM of a cross-process test ({@link RdmaPeerMain} or another test main) and what it printed: its result
 * line, checked against what it must print, its progress, and its last lines for a failure report.
 */
final class PeerProcess
{
    final String name;
    final Process process;
    final BlockingQueue<String> lines;
    final List<String> seen = new ArrayList<>();
    String success;
    String resultPrefix;
    String result;
    long lateJoinMessages;

    private PeerProcess(final String name, final Process process)
    {
        this.name = name;
        this.process = process;
        this.lines = PeerProcesses.lines(process);
    }

    static PeerProcess start(final String name, final List<String> command, final List<Process> processes,
        final List<PeerProcess> peers) throws IOException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(process);
        final PeerProcess peer = new PeerProcess(name, process);
        peers.add(peer);
        return peer;
    }

    /**
     * The result line this peer must print: {@code success}, alone or followed by a space and more; any other
     * line starting with {@code resultPrefix} or FAILED is a failure.
     */
    void expect(final String success, final String resultPrefix)
    {
        this.success = success;
        this.resultPrefix = resultPrefix;
    }

    /** A late joiner succeeds with "RECEIVED n OK first=f" where it joined mid-stream and n + f == messages. */
    void expectLateJoin(final long messages)
    {
        this.lateJoinMessages = messages;
    }

    boolean succeeded()
    {
        return null != result && isSuccess(result);
    }

    private boolean isSuccess(final String line)
    {
        if (lateJoinMessages > 0)
        {
            final String[] words = line.split(" ");
            if (words.length < 4 || !"RECEIVED".equals(words[0]) || !"OK".equals(words[2]) ||
                !words[3].startsWith("first="))
            {
                return false;
            }
            final long received = Long.parseLong(words[1]);
            final long first = Long.parseLong(words[3].substring("first=".length()));
            return first > 0 && received + first == lateJoinMessages;
        }
        return line.equals(success) || line.startsWith(success + " ");
    }

    /**
     * Wait until every peer reported success; the first FAILED (or a peer that dies without a result, or the bound)
     * ends the wait, so a stall or a loss is reported within seconds, not at the bound.
     *
     * @return null once every peer succeeded, else the problems with every peer's last output lines.
     */
    static String awaitAll(final List<PeerProcess> peers, final long boundMs) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(boundMs);
        final List<String> problems = new ArrayList<>();
        while (problems.isEmpty() && !peers.stream().allMatch(PeerProcess::succeeded))
        {
            if (System.nanoTime() > deadlineNs)
            {
                problems.add("no result within the run bound of " + boundMs + " ms");
                break;
            }
            for (final PeerProcess peer : peers)
            {
                final String problem = peer.pollResult();
                if (null != problem)
                {
                    problems.add(peer.name + ": " + problem);
                }
            }
        }
        if (problems.isEmpty())
        {
            return null;
        }
        final StringBuilder report = new StringBuilder(String.join("\n", problems));
        for (final PeerProcess peer : peers)
        {
            report.append("\n  ").append(peer.name).append(" output (last lines):\n    ").append(peer.tail());
        }
        return report.toString();
    }

    /** @return why this peer failed, or null while it is still running or once it succeeded. */
    String pollResult() throws InterruptedException
    {
        if (null != result)
        {
            return null;
        }
        final String line = PeerProcesses.awaitLine(lines, seen, TimeUnit.MILLISECONDS.toNanos(20),
            resultPrefix, "FAILED");
        if (null != line)
        {
            result = line;
            return isSuccess(line) ? null : line;
        }
        if (!process.isAlive() && lines.isEmpty())
        {
            result = "exited with " + process.exitValue() + " before printing a result";
            return result;
        }
        return null;
    }

    /** @return true once the peer reported receiving at least {@code messages}; false on failure or timeout. */
    boolean awaitProgress(final long messages, final long timeoutMs) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadlineNs)
        {
            final String line = PeerProcesses.awaitLine(lines, seen, TimeUnit.MILLISECONDS.toNanos(100),
                "PROGRESS ", "FAILED", "RECEIVED");
            if (null != line)
            {
                if (!line.startsWith("PROGRESS "))
                {
                    result = line;
                    return false;
                }
                if (Long.parseLong(line.substring("PROGRESS ".length()).trim()) >= messages)
                {
                    return true;
                }
            }
            else if (!process.isAlive())
            {
                return false;
            }
        }
        return false;
    }

    String await(final long timeoutMs, final String... prefixes) throws InterruptedException
    {
        return PeerProcesses.awaitLine(lines, seen, TimeUnit.MILLISECONDS.toNanos(timeoutMs), prefixes);
    }

    void say(final String line) throws IOException
    {
        final OutputStream in = process.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    String tail()
    {
        return PeerProcesses.tail(seen, lines, 25);
    }
}
