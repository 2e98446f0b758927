package io.verbus.bench.contender;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.driver.Affinity;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.TimeUnit;

/**
 * The child process of a cross-process contender: subscribes to the harness's ping stream and either echoes every
 * message on the pong stream (latency) or counts them and offers the running count on the pong stream about once a
 * millisecond (throughput). One thread, pinned, spinning; it ends when its standard input closes.
 * <pre>
 * EchoProcessMain echo|count CPU MODE PING_PORT PONG_PORT SECRET_FILE
 *     MODE: verbus-direct|verbus-agent|verbus-verbs-direct (commit=counter), verbus-imm-direct|verbus-verbs-imm-direct
 * EchoProcessMain echo|count CPU aeron-ipc AERON_DIR
 * </pre>
 */
public final class EchoProcessMain
{
    private static final int FRAGMENT_LIMIT = 256;
    private static final int POLLS_PER_DUTY_CYCLE = 16;
    private static final long COUNT_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long OFFER_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);

    private static volatile boolean running = true;

    private EchoProcessMain()
    {
    }

    /** The two streams of this end, whichever API carries them. */
    private interface Streams extends AutoCloseable
    {
        int poll(FragmentHandler handler);

        long offer(DirectBuffer buffer, int offset, int length);

        /** Driver duty cycle and, in direct mode, the publication's sender: while idle or back-pressured. */
        void dutyCycle();

        /** After an offer in sender-agent mode, the agent's turn (there is no third core for it). */
        void afterOffer();

        @Override
        void close();
    }

    public static void main(final String[] args) throws Exception
    {
        final boolean echo = "echo".equals(args[0]);
        final int cpu = Integer.parseInt(args[1]);
        watchStandardInput();
        try (Streams streams = open(args))
        {
            System.out.println("READY");
            System.out.flush();
            if (cpu >= 0)
            {
                Affinity.pinCurrentThread(cpu);
            }
            if (echo)
            {
                echo(streams);
            }
            else
            {
                count(streams);
            }
        }
    }

    private static void echo(final Streams streams)
    {
        final FragmentHandler handler = new FragmentAssembler((buffer, offset, length, header) ->
            offerOrFail(streams, buffer, offset, length));
        int emptyPolls = 0;
        while (running)
        {
            if (0 == streams.poll(handler) && ++emptyPolls % POLLS_PER_DUTY_CYCLE == 0)
            {
                streams.dutyCycle();
            }
        }
    }

    private static void count(final Streams streams)
    {
        final long[] received = {0};
        final FragmentHandler handler = new FragmentAssembler((buffer, offset, length, header) -> received[0]++);
        final UnsafeBuffer countMessage = RemoteEnd.countBuffer();
        long lastReportNs = System.nanoTime();
        long lastReported = -1;
        int polls = 0;
        while (running)
        {
            if (0 == streams.poll(handler) && ++polls % POLLS_PER_DUTY_CYCLE == 0)
            {
                streams.dutyCycle();
            }
            final long nowNs = System.nanoTime();
            if (nowNs - lastReportNs >= COUNT_INTERVAL_NS && received[0] != lastReported)
            {
                countMessage.putLong(0, received[0]);
                if (streams.offer(countMessage, 0, Long.BYTES) > 0)
                {
                    streams.afterOffer();
                    lastReported = received[0];
                    lastReportNs = nowNs;
                }
            }
        }
    }

    private static void offerOrFail(
        final Streams streams, final DirectBuffer buffer, final int offset, final int length)
    {
        long deadlineNs = 0;
        long result;
        while ((result = streams.offer(buffer, offset, length)) < 0)
        {
            if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result)
            {
                throw new IllegalStateException("pong publication refused the echo: code " + result);
            }
            final long nowNs = System.nanoTime();
            if (0 == deadlineNs)
            {
                deadlineNs = nowNs + OFFER_TIMEOUT_NS;
            }
            else if (nowNs > deadlineNs)
            {
                throw new IllegalStateException("pong publication back-pressured for 5 s: code " + result);
            }
            streams.dutyCycle();
        }
        streams.afterOffer();
    }

    private static Streams open(final String[] args) throws IOException
    {
        return switch (args[2])
        {
            case "verbus-direct", "verbus-agent" -> verbus("shm", "verbus-direct".equals(args[2]),
                Integer.parseInt(args[3]), Integer.parseInt(args[4]), args[5], "counter");
            case "verbus-verbs-direct" -> verbus("verbs", true, Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                args[5], "counter");
            case "verbus-imm-direct" -> verbus("shm", true, Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                args[5], "imm");
            case "verbus-verbs-imm-direct" -> verbus("verbs", true, Integer.parseInt(args[3]),
                Integer.parseInt(args[4]), args[5], "imm");
            case "aeron-ipc" -> aeron(args[3]);
            default -> throw new IllegalArgumentException("unknown mode " + args[2]);
        };
    }

    private static Streams verbus(
        final String provider,
        final boolean exclusive,
        final int pingPort,
        final int pongPort,
        final String secret,
        final String commit)
        throws IOException
    {
        final TempDirectory dir = TempDirectory.create("verbus-bench-child-");
        final Verbus verbus = Verbus.launch(new Verbus.Context()
            .dir(dir.path().toString())
            .threadingMode(ThreadingMode.INVOKER)
            .idleStrategy("noop"));
        final Subscription subscription = verbus.addSubscription(
            CrossProcessContender.rdmaChannel(provider, pingPort, secret, commit),
            CrossProcessContender.PING_STREAM_ID);
        final String pongChannel = CrossProcessContender.rdmaChannel(provider, pongPort, secret, commit);
        final Publication publication = exclusive ?
            verbus.addExclusivePublication(pongChannel, CrossProcessContender.PONG_STREAM_ID) :
            verbus.addPublication(pongChannel, CrossProcessContender.PONG_STREAM_ID);
        return new Streams()
        {
            public int poll(final FragmentHandler handler)
            {
                return subscription.poll(handler, FRAGMENT_LIMIT);
            }

            public long offer(final DirectBuffer buffer, final int offset, final int length)
            {
                return publication.offer(buffer, offset, length);
            }

            public void dutyCycle()
            {
                VerbusContender.dutyCycle(verbus, publication, exclusive);
            }

            public void afterOffer()
            {
                if (!exclusive)
                {
                    verbus.invoke();
                }
            }

            public void close()
            {
                org.agrona.CloseHelper.quietCloseAll(publication, subscription, verbus, dir);
            }
        };
    }

    private static Streams aeron(final String aeronDir)
    {
        final Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir));
        final io.aeron.Subscription subscription =
            aeron.addSubscription(CrossProcessContender.AERON_IPC_CHANNEL, CrossProcessContender.PING_STREAM_ID);
        final io.aeron.Publication publication = aeron.addExclusivePublication(
            CrossProcessContender.AERON_IPC_CHANNEL, CrossProcessContender.PONG_STREAM_ID);
        return new Streams()
        {
            public int poll(final FragmentHandler handler)
            {
                return subscription.poll(handler, FRAGMENT_LIMIT);
            }

            public long offer(final DirectBuffer buffer, final int offset, final int length)
            {
                return publication.offer(buffer, offset, length);
            }

            public void dutyCycle()
            {
            }

            public void afterOffer()
            {
            }

            public void close()
            {
                org.agrona.CloseHelper.quietCloseAll(publication, subscription, aeron);
            }
        };
    }

    /** The harness closes our standard input to stop us (or dies, which closes it too). */
    private static void watchStandardInput()
    {
        final Thread watcher = new Thread(() ->
        {
            final InputStream in = System.in;
            try
            {
                while (in.read() >= 0)
                {
                    Thread.onSpinWait();
                }
            }
            catch (final IOException ignore)
            {
                // closed: stop
            }
            running = false;
        }, "stdin-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }
}
