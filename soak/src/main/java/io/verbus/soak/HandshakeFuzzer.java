package io.verbus.soak;

import io.verbus.media.rdma.protocol.ChallengeFlyweight;
import io.verbus.media.rdma.protocol.ConnectFlyweight;
import io.verbus.media.rdma.protocol.HandshakeAuthenticator;
import io.verbus.media.rdma.protocol.HandshakeHeader;
import io.verbus.media.rdma.protocol.HelloFlyweight;
import io.verbus.media.rdma.protocol.QpInfoCodec;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * Hostile clients against a live publisher's control port, each on its own short TCP connection: random bytes,
 * headers with a bad magic, version, type or length, truncated HELLOs, HELLOs for an unknown stream or version,
 * CONNECTs signed with a wrong secret (after a real CHALLENGE), truncated CONNECTs, garbage after the CHALLENGE,
 * bit-flipped HELLOs, handshakes abandoned mid-way, and (on one thread, a few at a time) HELLOs left unfinished for the
 * publisher's deadline to close. Clients close with a reset (SO_LINGER 0), so a million connections leave no
 * TIME_WAIT behind, and half-close after their last byte so the publisher need not wait for its deadlines.
 * <p>
 * Outcomes: rejected (a REJECT came), closed (the publisher closed without one, which includes a refusal at its
 * pending-handshake limit), abandoned (the client walked away after the CHALLENGE, as planned). Failures: accepted
 * (an ACCEPT for a forged CONNECT), unanswered (no close within {@link #REPLY_TIMEOUT_MS}, more than the publisher's
 * HELLO deadline plus three step timeouts), unreachable (the publisher refused the connection, or did not take it
 * twice in a row).
 */
final class HandshakeFuzzer
{
    static final long REPLY_TIMEOUT_MS = 20_000;
    static final int CONNECT_TIMEOUT_MS = 10_000;
    private static final int CASES = 9;
    private static final String[] CASE_NAMES = { "random", "bad-header", "truncated-hello", "bad-hello",
        "wrong-secret", "truncated-connect", "garbage-after-hello", "bit-flipped-hello", "abandoned" };

    final AtomicLong fuzzed = new AtomicLong();
    final AtomicLong rejected = new AtomicLong();
    final AtomicLong closed = new AtomicLong();
    final AtomicLong abandoned = new AtomicLong();
    final AtomicLong slow = new AtomicLong();
    final AtomicLong accepted = new AtomicLong();
    final AtomicLong unanswered = new AtomicLong();
    final AtomicLong unreachable = new AtomicLong();
    /** Connects that timed out once and were tried again (not failures unless the second timed out too). */
    final AtomicLong connectRetries = new AtomicLong();
    final AtomicLongArray perCase = new AtomicLongArray(CASES);
    private final List<String> failures = new ArrayList<>();
    private final InetSocketAddress target;
    private final int streamId;
    private final byte[] wrongSecret;
    private final long intervalNs;
    private final AtomicLong nextSlotNs = new AtomicLong(System.nanoTime());
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;
    private volatile long startNs;
    private volatile long stopNs;

    /** How one connection ended. */
    enum Outcome
    {
        REJECTED, CLOSED, CHALLENGE, ACCEPTED, UNANSWERED
    }

    /**
     * @param target         the publisher's control endpoint.
     * @param streamId       a stream the publisher serves (for the HELLOs that get a CHALLENGE).
     * @param ratePerSecond  connections per second over all threads; 0 for as fast as they go.
     */
    HandshakeFuzzer(final InetSocketAddress target, final int streamId, final double ratePerSecond)
    {
        this.target = target;
        this.streamId = streamId;
        this.wrongSecret = "not-the-soak-secret-but-long-enough".getBytes(StandardCharsets.US_ASCII);
        this.intervalNs = ratePerSecond > 0 ? (long)(1e9 / ratePerSecond) : 0;
    }

    void start(final int threadCount, final String name)
    {
        startNs = System.nanoTime();
        for (int i = 0; i < threadCount; i++)
        {
            final long seed = System.nanoTime() * 31 + i;
            threads.add(Thread.ofPlatform().name(name + "-fuzz-" + i).daemon().start(() -> fuzz(seed)));
        }
        threads.add(Thread.ofPlatform().name(name + "-fuzz-slow").daemon().start(this::fuzzSlow));
    }

    void stop() throws InterruptedException
    {
        running = false;
        for (final Thread thread : threads)
        {
            thread.join(REPLY_TIMEOUT_MS + CONNECT_TIMEOUT_MS);
        }
        stopNs = System.nanoTime();
    }

    /** @return completed attempts per second from start to stop (or to now while running). */
    double ratePerSecond()
    {
        final long endNs = 0 == stopNs ? System.nanoTime() : stopNs;
        return endNs > startNs ? fuzzed.get() * 1e9 / (endNs - startNs) : 0;
    }

    long failureCount()
    {
        return accepted.get() + unanswered.get() + unreachable.get();
    }

    synchronized List<String> failures()
    {
        return new ArrayList<>(failures);
    }

    String perCase()
    {
        final StringBuilder text = new StringBuilder();
        for (int i = 0; i < CASES; i++)
        {
            text.append(0 == i ? "" : ", ").append(CASE_NAMES[i]).append(' ').append(perCase.get(i));
        }
        return text.toString();
    }

    private void fuzz(final long seed)
    {
        final Client client = new Client(new SplittableRandom(seed));
        while (running)
        {
            awaitSlot();
            final int fuzzCase = client.random.nextInt(CASES);
            record(fuzzCase, client.connectAndRun(fuzzCase));
        }
    }

    /** HELLOs left unfinished: the publisher must close them by its HELLO deadline; one at a time, every 2 s. */
    private void fuzzSlow()
    {
        final Client client = new Client(new SplittableRandom(System.nanoTime()));
        while (running)
        {
            record(-1, client.connectAndRun(-1));
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(2));
        }
    }

    private void awaitSlot()
    {
        if (0 == intervalNs)
        {
            return;
        }
        final long nowNs = System.nanoTime();
        // Never bank more than a second of unused slots (after a pause the rate does not burst).
        nextSlotNs.updateAndGet((next) -> Math.max(next, nowNs - TimeUnit.SECONDS.toNanos(1)));
        final long slotNs = nextSlotNs.getAndAdd(intervalNs);
        final long waitNs = slotNs - nowNs;
        if (waitNs > 0)
        {
            LockSupport.parkNanos(waitNs);
        }
    }

    /**
     * Count an attempt that ran to an outcome: only those are fuzzed handshakes (one that could not even connect is
     * an unreachable failure, not an attempt).
     */
    private void record(final int fuzzCase, final Outcome outcome)
    {
        if (null == outcome)
        {
            return; // unreachable, already counted
        }
        fuzzed.incrementAndGet();
        if (fuzzCase < 0)
        {
            slow.incrementAndGet();
        }
        else
        {
            perCase.incrementAndGet(fuzzCase);
        }
        switch (outcome)
        {
            case REJECTED -> rejected.incrementAndGet();
            case CLOSED -> closed.incrementAndGet();
            case CHALLENGE -> abandoned.incrementAndGet();
            case ACCEPTED -> fail(accepted, fuzzCase, "the publisher ACCEPTED a forged handshake");
            case UNANSWERED -> fail(unanswered, fuzzCase, "no reply nor close within " + REPLY_TIMEOUT_MS + " ms");
            default -> throw new IllegalStateException(String.valueOf(outcome));
        }
    }

    private synchronized void fail(final AtomicLong counter, final int fuzzCase, final String what)
    {
        counter.incrementAndGet();
        if (failures.size() < 20)
        {
            failures.add((fuzzCase < 0 ? "slow" : CASE_NAMES[fuzzCase]) + ": " + what);
        }
    }

    /** One thread's client: its buffers, its random and its wrong-secret authenticator. */
    private final class Client
    {
        final SplittableRandom random;
        private final HandshakeAuthenticator forger = new HandshakeAuthenticator(wrongSecret);
        private final UnsafeBuffer out = new UnsafeBuffer(new byte[HandshakeHeader.MAX_MESSAGE_LENGTH * 2]);
        private final UnsafeBuffer in = new UnsafeBuffer(new byte[HandshakeHeader.MAX_MESSAGE_LENGTH]);
        private final byte[] clientNonce = new byte[HandshakeHeader.NONCE_LENGTH];
        /** The HELLO last sent: proofs cover it. */
        private final byte[] helloBytes = new byte[HelloFlyweight.LENGTH];
        private final byte[] serverNonce = new byte[HandshakeHeader.NONCE_LENGTH];
        private final HelloFlyweight hello = new HelloFlyweight();
        private final ConnectFlyweight connect = new ConnectFlyweight();
        private final ChallengeFlyweight challenge = new ChallengeFlyweight();

        Client(final SplittableRandom random)
        {
            this.random = random;
        }

        Outcome connectAndRun(final int fuzzCase)
        {
            return connectAndRun(fuzzCase, true);
        }

        /**
         * @param mayRetry whether a connect that times out may be tried once more before it counts as unreachable.
         */
        private Outcome connectAndRun(final int fuzzCase, final boolean mayRetry)
        {
            IOException connectFailure = null;
            try (Socket socket = new Socket())
            {
                socket.setSoLinger(true, 0);
                socket.setTcpNoDelay(true);
                try
                {
                    socket.connect(target, CONNECT_TIMEOUT_MS);
                }
                catch (final ConnectException | SocketTimeoutException ex)
                {
                    connectFailure = ex;
                }
                if (null == connectFailure)
                {
                    socket.setSoTimeout((int)REPLY_TIMEOUT_MS);
                    return run(fuzzCase, socket, socket.getInputStream(), socket.getOutputStream());
                }
            }
            catch (final SocketTimeoutException ex)
            {
                return Outcome.UNANSWERED;
            }
            catch (final IOException ex)
            {
                return Outcome.CLOSED; // reset by the publisher, or a write after it closed
            }
            // The connect failed; its socket is closed by now.
            if (mayRetry && connectFailure instanceof SocketTimeoutException)
            {
                // No SYN-ACK for CONNECT_TIMEOUT_MS from a loopback port: the kernel did not take the SYN (seen in a CI
                // run, with the load at 16 on 2 CPUs from the soak's JVMs starting). A wedged accept loop would show as
                // unanswered first: the backlog completes 64 connections on its own. So the endpoint is judged by one
                // more connection; the retry is counted and printed, a second timeout fails.
                connectRetries.incrementAndGet();
                return connectAndRun(fuzzCase, false);
            }
            fail(unreachable, Math.max(fuzzCase, 0), "cannot connect to " + target + (mayRetry ? "" : " twice") + ": " +
                connectFailure);
            return null;
        }

        private Outcome run(final int fuzzCase, final Socket socket, final InputStream input, final OutputStream output)
            throws IOException
        {
            switch (fuzzCase)
            {
                case 0 ->
                {
                    final int length = random.nextInt(300);
                    for (int i = 0; i < length; i++)
                    {
                        out.putByte(i, (byte)random.nextInt());
                    }
                    return sendAndFinish(socket, input, output, length);
                }
                case 1 ->
                {
                    final int length = hello(0);
                    switch (random.nextInt(4))
                    {
                        case 0 -> out.putInt(HandshakeHeader.MAGIC_OFFSET, random.nextInt() | 1);
                        case 1 -> out.putShort(HandshakeHeader.VERSION_OFFSET,
                            (short)(HandshakeHeader.MAX_SUPPORTED_VERSION + 1 + random.nextInt(1000)));
                        case 2 -> out.putShort(HandshakeHeader.TYPE_OFFSET, (short)(2 + random.nextInt(100)));
                        default -> out.putInt(HandshakeHeader.LENGTH_OFFSET, randomBadLength());
                    }
                    return sendAndFinish(socket, input, output, length);
                }
                case 2 ->
                {
                    return sendAndFinish(socket, input, output, random.nextInt(hello(0)));
                }
                case 3 ->
                {
                    final int length = hello(0);
                    switch (random.nextInt(3))
                    {
                        case 0 -> hello.streamId(streamId + 1000 + random.nextInt(1000));
                        case 1 -> hello.minVersion((short)(2 + random.nextInt(100))).maxVersion((short)1);
                        default -> hello.flags(2 + random.nextInt(1000));
                    }
                    return sendAndFinish(socket, input, output, length);
                }
                case 7 ->
                {
                    final int length = hello(0);
                    final int bit = random.nextInt(length * 8);
                    out.putByte(bit / 8, (byte)(out.getByte(bit / 8) ^ (1 << (bit % 8))));
                    return sendAndFinish(socket, input, output, length);
                }
                case -1 ->
                {
                    output.write(out.byteArray(), 0, 1 + random.nextInt(hello(0) - 1));
                    output.flush();
                    return awaitReply(input); // no half-close: the HELLO deadline must end it
                }
                default ->
                {
                    return afterChallenge(fuzzCase, socket, input, output);
                }
            }
        }

        /** The cases that first get a real CHALLENGE. */
        private Outcome afterChallenge(
            final int fuzzCase, final Socket socket, final InputStream input, final OutputStream output)
            throws IOException
        {
            output.write(out.byteArray(), 0, hello(0));
            output.flush();
            final Outcome first = awaitReply(input);
            if (Outcome.CHALLENGE != first)
            {
                return first;
            }
            challenge.wrap(in, 0).getServerNonce(serverNonce);
            switch (fuzzCase)
            {
                case 4 ->
                {
                    return sendAndFinish(socket, input, output, forgedConnect());
                }
                case 5 ->
                {
                    return sendAndFinish(socket, input, output, random.nextInt(forgedConnect()));
                }
                case 6 ->
                {
                    final int length = 1 + random.nextInt(HandshakeHeader.MAX_MESSAGE_LENGTH);
                    if (random.nextBoolean())
                    {
                        for (int i = 0; i < length; i++)
                        {
                            out.putByte(i, (byte)random.nextInt());
                        }
                        return sendAndFinish(socket, input, output, length);
                    }
                    // A message of the wrong type where the CONNECT belongs: another HELLO or a READY.
                    return sendAndFinish(socket, input, output, random.nextBoolean() ? hello(0) : ready());
                }
                default ->
                {
                    return Outcome.CHALLENGE; // abandoned: the reset close ends it
                }
            }
        }

        private int hello(final int offset)
        {
            random.nextBytes(clientNonce);
            hello.wrap(out, offset).writeHeader()
                .minVersion(HandshakeHeader.MIN_SUPPORTED_VERSION)
                .maxVersion(HandshakeHeader.MAX_SUPPORTED_VERSION)
                .streamId(streamId)
                .flags(0)
                .groupTag(0)
                .clientNonce(clientNonce);
            out.getBytes(offset, helloBytes);
            return HelloFlyweight.LENGTH;
        }

        private int ready()
        {
            HandshakeHeader.write(out, 0, HandshakeHeader.READY_TYPE, HandshakeHeader.LENGTH);
            return HandshakeHeader.LENGTH;
        }

        /** A plausible CONNECT for the CHALLENGE just received, proven with the wrong secret. */
        private int forgedConnect()
        {
            final QpInfoCodec.QpInfo qp = new QpInfoCodec.QpInfo();
            qp.qpn = 1 + random.nextInt(QpInfoCodec.MAX_24_BIT);
            qp.psn = random.nextInt(QpInfoCodec.MAX_24_BIT);
            qp.pathMtu = 1024;
            qp.maxInline = 64;
            final long termLength = challenge.termLength();
            out.setMemory(0, ConnectFlyweight.LENGTH, (byte)0);
            connect.wrap(out, 0).writeHeader().qpInfo(qp);
            connect.ring().set(0x7f00_0000_0000L + 4096L * random.nextInt(1 << 20), 3 * termLength, random.nextInt());
            connect.counter().set(0x7f10_0000_0000L + 64L * random.nextInt(1 << 20), 64, random.nextInt());
            forger.sign(HandshakeAuthenticator.CONNECT_LABEL, clientNonce, serverNonce, helloBytes, out, 0,
                ConnectFlyweight.PROOF_OFFSET);
            return ConnectFlyweight.LENGTH;
        }

        private int randomBadLength()
        {
            return switch (random.nextInt(3))
            {
                case 0 -> random.nextInt(HandshakeHeader.LENGTH);
                case 1 -> HandshakeHeader.MAX_MESSAGE_LENGTH + 1 + random.nextInt(1 << 20);
                default -> -1 - random.nextInt(1000);
            };
        }

        private Outcome sendAndFinish(
            final Socket socket, final InputStream input, final OutputStream output, final int length)
            throws IOException
        {
            if (length > 0)
            {
                output.write(out.byteArray(), 0, length);
                output.flush();
            }
            socket.shutdownOutput();
            return awaitReply(input);
        }

        /** Reads one message: REJECT, CHALLENGE or ACCEPT; or the end of the connection. */
        private Outcome awaitReply(final InputStream input) throws IOException
        {
            try
            {
                readFully(input, 0, HandshakeHeader.LENGTH);
                final int length = HandshakeHeader.length(in, 0);
                if (HandshakeHeader.MAGIC != HandshakeHeader.magic(in, 0) || length < HandshakeHeader.LENGTH ||
                    length > HandshakeHeader.MAX_MESSAGE_LENGTH)
                {
                    return Outcome.CLOSED;
                }
                readFully(input, HandshakeHeader.LENGTH, length - HandshakeHeader.LENGTH);
                return switch (HandshakeHeader.type(in, 0))
                {
                    case HandshakeHeader.REJECT_TYPE -> Outcome.REJECTED;
                    case HandshakeHeader.CHALLENGE_TYPE -> Outcome.CHALLENGE;
                    case HandshakeHeader.ACCEPT_TYPE -> Outcome.ACCEPTED;
                    default -> Outcome.CLOSED;
                };
            }
            catch (final EOFException | SocketException ex)
            {
                return Outcome.CLOSED;
            }
        }

        private void readFully(final InputStream input, final int offset, final int length) throws IOException
        {
            int read = 0;
            while (read < length)
            {
                final int n = input.read(in.byteArray(), offset + read, length - read);
                if (n < 0)
                {
                    throw new EOFException();
                }
                read += n;
            }
        }
    }
}
