package io.verbus.media.rdma;

import io.aeron.logbuffer.Header;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of {@link RdmaUseAfterCloseTest}: keeps the buffer and the {@link Header} a poll of an {@code rdma:}
 * subscription handed it, closes the subscription, then Verbus, and reads through both after each. A ring unmapped
 * under them kills this JVM with SIGSEGV; quarantined, the reads return (zeros or the old bytes).
 * <p>
 * Arguments: the Verbus directory, the provider.
 */
public final class RdmaUseAfterCloseMain
{
    private static final int STREAM_ID = 4040;
    private static DirectBuffer keptBuffer;
    private static int keptOffset;
    private static Header keptHeader;

    private RdmaUseAfterCloseMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final String provider = args[1];
        final Verbus verbus = Verbus.launch(new Verbus.Context()
            .dir(Path.of(args[0]).resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED)
            .idleStrategy("sleeping"));
        final Publication publication = verbus.addPublication(
            "rdma:endpoint=127.0.0.1:0|provider=" + provider + "|term-length=64k|timeout=1s", STREAM_ID);
        final int port = RdmaVerbusTest.controlPort(verbus.countersReader());
        final Subscription subscription = verbus.addSubscription(
            "rdma:endpoint=127.0.0.1:" + port + "|provider=" + provider, STREAM_ID);
        final UnsafeBuffer message = new UnsafeBuffer(new byte[64]);
        message.putLong(0, 0x5EED_F00DL);
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (null == keptHeader)
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new AssertionError("nothing delivered within 30 s");
            }
            publication.offer(message, 0, message.capacity());
            subscription.poll((buffer, offset, length, header) ->
            {
                keptBuffer = buffer;
                keptOffset = offset;
                keptHeader = header;
            }, 1);
            Thread.onSpinWait();
        }
        System.out.println("STEP polled: " + Long.toHexString(keptBuffer.getLong(keptOffset)));

        subscription.close();
        // Longer than the image's linger (the channel timeout, at least a second) and the conductor's close.
        Thread.sleep(3_000);
        System.out.println("STEP kept buffer after the subscription's close: read " +
            Long.toHexString(keptBuffer.getLong(keptOffset)));
        System.out.println("STEP kept header after the subscription's close: session " + keptHeader.sessionId());

        publication.close();
        verbus.close();
        System.out.println("STEP kept buffer after Verbus.close: read " +
            Long.toHexString(keptBuffer.getLong(keptOffset)));
        System.out.println("STEP kept header after Verbus.close: term offset " + keptHeader.termOffset());
        System.out.println("DONE");
    }
}
