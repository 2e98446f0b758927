package io.verbus.tools;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.tools.WritePingPongEnd.PollMode;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * RDMA WRITE ping-pong between two processes, the shape of perftest's {@code ib_write_lat}: a server process and a
 * client process, each with one RC QP and one busy-polling thread on its own inbox. The QP attributes, inbox
 * address and rkey are exchanged over a TCP socket, which then only sequences the phases. Per phase the client
 * names the poll mode ({@link PollMode}: the rdma media's data-then-counter commit, or perftest's last bytes) and the
 * round trips; it times each round trip and reports half of it, as {@code ib_write_lat} does.
 * <pre>
 * VerbsWritePingPong server --port P [--bind ADDRESS] [--provider verbs]
 * VerbsWritePingPong client --connect HOST:PORT [--provider verbs] [--size 64] [--iterations 5000]
 *                           [--warmup 20000] [--warmup-ms 20000] [--measure-ms 30000] [--poll counter,last-bytes]
 * </pre>
 * Each phase is bounded by count and by time: the warm-up by {@code --warmup} round trips or {@code --warmup-ms},
 * the measurement by {@code --iterations} or {@code --measure-ms}; a client that stops early sends a stop sequence.
 * The client prints one line per phase, e.g.
 * {@code WRITE-PINGPONG poll=counter size=64 iterations=5000 device=rxe0 inline=256 unit=half-round-trip-us
 * min=.. p50=.. p99=.. p99.9=.. max=..}.
 */
public final class VerbsWritePingPong
{
    static final int MAGIC = 0x5642_5750; // "VBWP"
    static final long ACCEPT_TIMEOUT_MS = TimeUnit.MINUTES.toMillis(5);
    /** Each handshake step and phase: generous, a JVM under an emulated CPU can stall for seconds. */
    static final int SOCKET_TIMEOUT_MS = (int)TimeUnit.MINUTES.toMillis(3);
    /**
     * How long a tcp device may take to connect: a measuring tool waits out a starved host (the Soft-RoCE guest, a
     * loaded CI machine) instead of failing the run at the provider's 2 s default.
     */
    static final long TCP_CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(20);
    private static final int READY = 1;
    private static final int DONE = 2;
    private static final int END = 0;

    /**
     * What one phase measured, sorted half round trips in nanoseconds.
     *
     * @param mode            how arrivals were polled.
     * @param sizeBytes       message size.
     * @param device          device name.
     * @param maxInlineData   the client QP's inline capacity.
     * @param halfRoundTripNs sorted half round trips.
     */
    public record Phase(String mode, int sizeBytes, String device, int maxInlineData, long[] halfRoundTripNs)
    {
        public long percentileNs(final double percentile)
        {
            // The nearest-rank sample; the epsilon keeps 99.9 % of 1000 at rank 999 (the product is 999.0000000000001).
            final int index = (int)Math.min(halfRoundTripNs.length - 1,
                Math.ceil(percentile / 100.0 * halfRoundTripNs.length - 1e-9) - 1);
            return halfRoundTripNs[Math.max(0, index)];
        }

        public String line()
        {
            return String.format(Locale.ROOT, "WRITE-PINGPONG poll=%s size=%d iterations=%d device=%s inline=%d " +
                "unit=half-round-trip-us min=%.2f p50=%.2f p99=%.2f p99.9=%.2f max=%.2f", mode, sizeBytes,
                halfRoundTripNs.length, device, maxInlineData, halfRoundTripNs[0] / 1000.0, percentileNs(50) / 1000.0,
                percentileNs(99) / 1000.0, percentileNs(99.9) / 1000.0,
                halfRoundTripNs[halfRoundTripNs.length - 1] / 1000.0);
        }
    }

    private VerbsWritePingPong()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final Options options = Options.parse(args);
        if (options.server)
        {
            try (ServerSocket listener = new ServerSocket())
            {
                listener.bind(new InetSocketAddress(options.host, options.port));
                System.out.println("LISTENING " + listener.getLocalPort());
                System.out.flush();
                serve(listener, options.provider);
            }
        }
        else
        {
            for (final Phase phase : runClient(options.host, options.port, options.provider, options.size,
                options.warmup, options.iterations, new TimeBounds(TimeUnit.MILLISECONDS.toNanos(options.warmupMs),
                TimeUnit.MILLISECONDS.toNanos(options.measureMs)), options.modes))
            {
                if (phase.halfRoundTripNs().length == 0)
                {
                    System.out.println("WRITE-PINGPONG-FAILED poll=" + phase.mode() + ": no round trip measured");
                    System.exit(1);
                }
                System.out.println(phase.line());
            }
        }
    }

    /**
     * Accepts one client and answers its phases until it ends.
     *
     * @param listener a bound listener.
     * @param provider fabric provider name.
     * @throws IOException when the socket fails.
     */
    public static void serve(final ServerSocket listener, final String provider) throws IOException
    {
        listener.setSoTimeout((int)ACCEPT_TIMEOUT_MS);
        try (Socket socket = listener.accept();
            Fabric fabric = Fabrics.open(provider, fabricContext());
            Device device = fabric.openDevice())
        {
            socket.setSoTimeout(SOCKET_TIMEOUT_MS);
            socket.setTcpNoDelay(true);
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            if (in.readInt() != MAGIC)
            {
                throw new IOException("not a VerbsWritePingPong client");
            }
            final int size = in.readInt();
            try (WritePingPongEnd end = new WritePingPongEnd(device, size))
            {
                final Peer peer = Peer.read(in);
                out.writeInt(MAGIC);
                Peer.write(out, end);
                connect(end, peer, in, out);
                int modeCode;
                while ((modeCode = in.readInt()) != END)
                {
                    final PollMode mode = PollMode.values()[checkedModeIndex(modeCode)];
                    final int rounds = in.readInt();
                    long sequence = in.readLong();
                    out.writeByte(READY);
                    out.flush();
                    for (int i = 0; i < rounds; i++)
                    {
                        if (WritePingPongEnd.STOP_SEQUENCE == end.await(++sequence, mode))
                        {
                            break;
                        }
                        end.send(sequence, mode);
                    }
                    end.drain();
                    end.clearInbox();
                    out.writeByte(DONE);
                    out.flush();
                }
            }
        }
    }

    /**
     * Connects to a server and runs one measured phase per poll mode: {@code warmup} round trips or
     * {@code bounds.warmupNs}, whichever ends first, then {@code iterations} measured or {@code bounds.measureNs}.
     *
     * @return one phase per mode, in order.
     * @throws IOException when the socket fails.
     */
    public static List<Phase> runClient(
        final String host,
        final int port,
        final String provider,
        final int size,
        final int warmup,
        final int iterations,
        final TimeBounds bounds,
        final List<PollMode> modes) throws IOException
    {
        final List<Phase> phases = new ArrayList<>();
        try (Socket socket = connectWithRetry(host, port);
            Fabric fabric = Fabrics.open(provider, fabricContext());
            Device device = fabric.openDevice();
            WritePingPongEnd end = new WritePingPongEnd(device, size))
        {
            socket.setSoTimeout(SOCKET_TIMEOUT_MS);
            socket.setTcpNoDelay(true);
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(MAGIC);
            out.writeInt(size);
            Peer.write(out, end);
            if (in.readInt() != MAGIC)
            {
                throw new IOException("not a VerbsWritePingPong server");
            }
            connect(end, Peer.read(in), in, out);
            long sequence = 0;
            for (final PollMode mode : modes)
            {
                out.writeInt(mode.ordinal() + 1);
                out.writeInt(warmup + iterations);
                out.writeLong(sequence);
                out.flush();
                expect(in, READY);
                final long[] samples = new long[iterations];
                final long warmupEndNs = System.nanoTime() + bounds.warmupNs();
                int warmed = 0;
                while (warmed < warmup && System.nanoTime() < warmupEndNs)
                {
                    end.send(++sequence, mode);
                    end.await(sequence, mode);
                    warmed++;
                }
                final long measureEndNs = System.nanoTime() + bounds.measureNs();
                int measured = 0;
                while (measured < iterations && System.nanoTime() < measureEndNs)
                {
                    final long startNs = System.nanoTime();
                    end.send(++sequence, mode);
                    end.await(sequence, mode);
                    samples[measured++] = (System.nanoTime() - startNs) / 2;
                }
                if (warmed + measured < warmup + iterations)
                {
                    end.send(WritePingPongEnd.STOP_SEQUENCE, mode);
                }
                end.drain();
                expect(in, DONE);
                final long[] taken = Arrays.copyOf(samples, measured);
                Arrays.sort(taken);
                phases.add(new Phase(mode.label, size, device.attributes().name(), end.maxInlineData(), taken));
            }
            out.writeInt(END);
            out.flush();
        }
        return phases;
    }

    /**
     * Time bounds of each phase, beside the round-trip counts.
     *
     * @param warmupNs  the longest warm-up.
     * @param measureNs the longest measurement.
     */
    public record TimeBounds(long warmupNs, long measureNs)
    {
        /** Defaults: 20 s of warm-up and 30 s of measurement at most. */
        public static final TimeBounds DEFAULT = new TimeBounds(TimeUnit.SECONDS.toNanos(20),
            TimeUnit.SECONDS.toNanos(30));
    }

    private static FabricContext fabricContext()
    {
        return new FabricContext().tcpConnectTimeoutNs(TCP_CONNECT_TIMEOUT_NS);
    }

    /** Both QPs reach RTS before either side posts: a WRITE into a QP still in RESET would wait for a retry. */
    private static void connect(
        final WritePingPongEnd end, final Peer peer, final DataInputStream in, final DataOutputStream out)
        throws IOException
    {
        end.connect(peer.info, peer.inbox, peer.rkey);
        out.writeByte(READY);
        out.flush();
        expect(in, READY);
    }

    private static void expect(final DataInputStream in, final int expected) throws IOException
    {
        final int got = in.readByte();
        if (got != expected)
        {
            throw new IOException("peer sent " + got + ", expected " + expected);
        }
    }

    private static int checkedModeIndex(final int modeCode) throws IOException
    {
        if (modeCode < 1 || modeCode > PollMode.values().length)
        {
            throw new IOException("unknown poll mode code " + modeCode);
        }
        return modeCode - 1;
    }

    private static Socket connectWithRetry(final String host, final int port) throws IOException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ACCEPT_TIMEOUT_MS);
        while (true)
        {
            final Socket socket = new Socket();
            try
            {
                socket.connect(new InetSocketAddress(host, port), SOCKET_TIMEOUT_MS);
                return socket;
            }
            catch (final IOException ex)
            {
                socket.close();
                if (System.nanoTime() > deadlineNs)
                {
                    throw ex;
                }
                try
                {
                    Thread.sleep(100);
                }
                catch (final InterruptedException interrupted)
                {
                    Thread.currentThread().interrupt();
                    throw ex;
                }
            }
        }
    }

    /** What one end tells the other: its QP, inbox address and rkey. */
    private record Peer(QueuePairConnectionInfo info, long inbox, int rkey)
    {
        static void write(final DataOutputStream out, final WritePingPongEnd end) throws IOException
        {
            final ByteBuffer buffer = ByteBuffer.allocate(QueuePairConnectionInfo.ENCODED_LENGTH);
            end.localConnectionInfo().encode(buffer);
            out.write(buffer.array());
            out.writeLong(end.inboxAddress());
            out.writeInt(end.rkey());
            out.flush();
        }

        static Peer read(final DataInputStream in) throws IOException
        {
            final byte[] bytes = new byte[QueuePairConnectionInfo.ENCODED_LENGTH];
            in.readFully(bytes);
            return new Peer(QueuePairConnectionInfo.decode(ByteBuffer.wrap(bytes)), in.readLong(), in.readInt());
        }
    }

    /** The command line. */
    private static final class Options
    {
        boolean server;
        String host = "0.0.0.0";
        int port = -1;
        String provider = VerbsWriteLatency.VERBS_PROVIDER_NAME;
        int size = VerbsWriteLatency.DEFAULT_SIZE;
        int warmup = VerbsWriteLatency.DEFAULT_WARMUP;
        int iterations = VerbsWriteLatency.DEFAULT_ITERATIONS;
        long warmupMs = TimeUnit.NANOSECONDS.toMillis(TimeBounds.DEFAULT.warmupNs());
        long measureMs = TimeUnit.NANOSECONDS.toMillis(TimeBounds.DEFAULT.measureNs());
        List<PollMode> modes = List.of(PollMode.COUNTER, PollMode.LAST_BYTES);

        static Options parse(final String[] args)
        {
            final Options options = new Options();
            if (args.length == 0 || !("server".equals(args[0]) || "client".equals(args[0])))
            {
                usage("first argument: server or client");
            }
            options.server = "server".equals(args[0]);
            for (int i = 1; i < args.length; i++)
            {
                final String flag = args[i];
                if (i + 1 >= args.length)
                {
                    usage(flag + " needs a value");
                }
                final String value = args[++i];
                switch (flag)
                {
                    case "--port" -> options.port = number(flag, value, 0);
                    case "--bind" -> options.host = value;
                    case "--connect" -> options.hostAndPort(value);
                    case "--provider" -> options.provider = value;
                    case "--size" -> options.size = number(flag, value, Long.BYTES);
                    case "--warmup" -> options.warmup = number(flag, value, 0);
                    case "--iterations" -> options.iterations = number(flag, value, 1);
                    case "--warmup-ms" -> options.warmupMs = number(flag, value, 0);
                    case "--measure-ms" -> options.measureMs = number(flag, value, 1);
                    case "--poll" -> options.modes = modes(value);
                    default -> usage("unknown flag " + flag);
                }
            }
            if (options.port < 0)
            {
                usage(options.server ? "server needs --port" : "client needs --connect HOST:PORT");
            }
            return options;
        }

        private void hostAndPort(final String value)
        {
            final int colon = value.lastIndexOf(':');
            if (colon <= 0)
            {
                usage("--connect needs HOST:PORT, got " + value);
            }
            host = value.substring(0, colon);
            port = number("--connect", value.substring(colon + 1), 1);
        }

        private static List<PollMode> modes(final String value)
        {
            final List<PollMode> modes = new ArrayList<>();
            for (final String label : value.split(","))
            {
                try
                {
                    modes.add(PollMode.of(label.trim()));
                }
                catch (final IllegalArgumentException ex)
                {
                    usage(ex.getMessage());
                }
            }
            return modes;
        }

        private static int number(final String flag, final String value, final int min)
        {
            try
            {
                final int number = Integer.parseInt(value);
                if (number < min)
                {
                    usage(flag + " must be >= " + min + ": " + value);
                }
                return number;
            }
            catch (final NumberFormatException ex)
            {
                usage(flag + " must be a whole number: " + value);
                return 0;
            }
        }

        private static void usage(final String problem)
        {
            final PrintStream err = System.err;
            err.println("VerbsWritePingPong: " + problem);
            err.println("usage: VerbsWritePingPong server --port P [--bind ADDRESS] [--provider verbs]");
            err.println("       VerbsWritePingPong client --connect HOST:PORT [--provider verbs] [--size 64] " +
                "[--iterations 5000] [--warmup 20000] [--warmup-ms 20000] [--measure-ms 30000] " +
                "[--poll counter,last-bytes]");
            System.exit(2);
        }
    }
}
