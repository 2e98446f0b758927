package io.verbus.fabric.conformance;

import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.QueuePairConnectionInfo;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

/**
 * A conformance peer in its own JVM, driven line by line on stdin; answers start with "R " (result) or
 * "E " (error). Arguments: provider, shm directory, tcp address, shm liveness timeout in ns.
 */
public final class PeerMain
{
    private PeerMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length != 4)
        {
            System.err.println("usage: PeerMain <provider> <shm dir> <tcp address> <liveness timeout ns>");
            System.exit(2);
        }
        final FabricContext context = new FabricContext()
            .shmDirectory(Path.of(args[1]))
            .tcpAddress(args[2])
            .shmLivenessTimeoutNs(Long.parseLong(args[3]));
        final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (InProcessPeer peer = new InProcessPeer(Fabrics.open(args[0], context), null);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)))
        {
            out.println("R ready");
            String line;
            while (null != (line = in.readLine()))
            {
                final String[] words = line.trim().split(" ");
                try
                {
                    if ("exit".equals(words[0]))
                    {
                        out.println("R bye");
                        break;
                    }
                    out.println("R " + execute(peer, words));
                }
                catch (final RuntimeException ex)
                {
                    out.println("E " + ex.toString().replace('\n', ' '));
                }
            }
        }
    }

    private static String execute(final InProcessPeer peer, final String[] w)
    {
        return switch (w[0])
        {
            case "qp" -> encode(peer.createQueuePair(Integer.parseInt(w[1])));
            case "connect" ->
            {
                peer.connect(decode(w, 1));
                yield "ok";
            }
            case "register" ->
            {
                final ConformancePeer.Region region = peer.register(Integer.parseInt(w[1]), Integer.parseInt(w[2]));
                yield region.id() + " " + region.address() + " " + region.rkey() + " " + region.length();
            }
            case "deregister" ->
            {
                peer.deregister(Integer.parseInt(w[1]));
                yield "ok";
            }
            case "read" -> Base64.getEncoder().encodeToString(
                peer.read(Integer.parseInt(w[1]), Long.parseLong(w[2]), Integer.parseInt(w[3])));
            case "write" ->
            {
                peer.write(Integer.parseInt(w[1]), Long.parseLong(w[2]),
                    w.length > 3 ? Base64.getDecoder().decode(w[3]) : new byte[0]);
                yield "ok";
            }
            case "postrecv" -> Integer.toString(peer.postReceive(
                Long.parseLong(w[1]), Integer.parseInt(w[2]), Long.parseLong(w[3]), Integer.parseInt(w[4])));
            case "pollrecv" ->
            {
                final List<ConformancePeer.Completion> completions =
                    peer.pollReceive(Integer.parseInt(w[1]), Long.parseLong(w[2]));
                final StringBuilder sb = new StringBuilder().append(completions.size());
                for (final ConformancePeer.Completion c : completions)
                {
                    sb.append(' ').append(c.wrId()).append(',').append(c.status()).append(',').append(c.opcode())
                        .append(',').append(c.byteLength()).append(',').append(c.immediate()).append(',')
                        .append(c.hasImmediate());
                }
                yield sb.toString();
            }
            case "state" -> peer.state().name();
            case "destroy" ->
            {
                peer.destroyQueuePair();
                yield "ok";
            }
            default -> throw new IllegalArgumentException("unknown command '" + w[0] + "'");
        };
    }

    static String encode(final QueuePairConnectionInfo info)
    {
        return info.qpNumber() + " " + info.psn() + " " + info.lid() + " " + HexFormat.of().formatHex(info.gid()) +
            " " + info.mtuBytes();
    }

    static QueuePairConnectionInfo decode(final String[] words, final int from)
    {
        return new QueuePairConnectionInfo(
            Integer.parseInt(words[from]),
            Integer.parseInt(words[from + 1]),
            Integer.parseInt(words[from + 2]),
            HexFormat.of().parseHex(words[from + 3]),
            Integer.parseInt(words[from + 4]));
    }
}
