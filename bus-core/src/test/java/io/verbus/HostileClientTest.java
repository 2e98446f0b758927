package io.verbus;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.counters.CountersFile;
import io.verbus.driver.CncFile;
import io.verbus.driver.DriverProtocol;
import io.verbus.log.LogImage;
import io.verbus.log.LogPublication;
import org.agrona.IoUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One client process of a standalone driver writes what an honest client never would (into the command ring, its
 * own log's tail, its own position counter), or dies mid-command: the driver goes on serving the other clients and
 * its close returns. Each case wedged the driver before the fix it names (found by a review, 2026-12-02).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS) // a wedged driver's close never returns
class HostileClientTest
{
    private static final int TYPE_ID = 1001;

    @TempDir
    Path tempDir;

    /** Died between the ring's claim and commit: the head stays on it until the ring is unblocked. */
    @Test
    void shouldServeOtherClientsAfterOneDiedBetweenClaimAndCommit() throws Exception
    {
        try (MediaDriver driver = MediaDriver.launch(
            driverContext().clientLivenessTimeoutNs(TimeUnit.SECONDS.toNanos(2))); // unblocked after 1 s
            Verbus other = Verbus.connect(clientContext()))
        {
            final ManyToOneRingBuffer ring = commandRing();
            assertTrue(ring.tryClaim(DriverProtocol.CLIENT_KEEPALIVE, 32) > 0); // and never committed
            assertConnects(other, 2);
            try (Verbus late = Verbus.connect(clientContext()))
            {
                assertConnects(late, 3);
            }
        }
    }

    /**
     * A client writes the ring's tail a whole ring ahead over nothing claimed: Agrona's unblock finds no record to pad
     * to, so every claim failed for good and the driver took every client for dead. Other clients are served.
     */
    @Test
    void shouldServeOtherClientsAfterOneMovedTheRingsTailByHand() throws Exception
    {
        try (MediaDriver driver = MediaDriver.launch(
            driverContext().clientLivenessTimeoutNs(TimeUnit.SECONDS.toNanos(6))); // repaired after 3 s
            Verbus other = Verbus.connect(clientContext()))
        {
            final ManyToOneRingBuffer ring = commandRing();
            final int tailOffset = ring.capacity() + org.agrona.concurrent.ringbuffer.RingBufferDescriptor
                .TAIL_POSITION_OFFSET;
            TestSupport.await("the ring drained", () -> ring.consumerPosition() == ring.producerPosition());
            ring.buffer().putLongVolatile(tailOffset, ring.consumerPosition() + ring.capacity());
            assertConnects(other, 4);
            try (Verbus late = Verbus.connect(clientContext()))
            {
                assertConnects(late, 5);
            }

        }
    }

    /** A committed record longer than the ring: Agrona's read replayed it on every duty cycle. */
    @Test
    void shouldPadOverARecordWhoseLengthCannotBeARecord() throws Exception
    {
        try (MediaDriver driver = MediaDriver.launch(driverContext());
            Verbus other = Verbus.connect(clientContext()))
        {
            final ManyToOneRingBuffer ring = commandRing();
            final int index = ring.tryClaim(DriverProtocol.ADD_COUNTER, DriverProtocol.COUNTER_LABEL_OFFSET + 8);
            final AtomicBuffer buffer = ring.buffer();
            buffer.putLong(index, 424242L);
            buffer.putLong(index + 8, 1L);
            buffer.putInt(index + DriverProtocol.COUNTER_TYPE_ID_OFFSET, TYPE_ID);
            buffer.putInt(index + DriverProtocol.COUNTER_KEY_LENGTH_OFFSET, 0);
            buffer.putInt(index + DriverProtocol.COUNTER_LABEL_OFFSET, 1);
            buffer.putIntRelease(RecordDescriptor.lengthOffset(index - RecordDescriptor.HEADER_LENGTH), 0x1000_0000);

            // What was queued behind the corrupt record is dropped with it (its senders get no answer); what comes
            // after the repair is served.
            TestSupport.await("the ring drained", () -> ring.consumerPosition() == ring.producerPosition());
            assertConnects(other, 2);
            assertEquals(0, countersOfType(driver), "the corrupt command was dropped, not executed over and over");
        }
    }

    /** The only subscriber of a stream writes a huge position: the conductor cleaned toward it term by term. */
    @Test
    void shouldKeepServingWhenASubscriberWritesAHugePosition() throws Exception
    {
        try (MediaDriver driver = MediaDriver.launch(driverContext());
            Verbus hostile = Verbus.connect(clientContext());
            Verbus other = Verbus.connect(clientContext()))
        {
            final List<Image> available = new CopyOnWriteArrayList<>();
            final Subscription subscription = hostile.addSubscription("ipc", 21, available::add, image -> { });
            final Publication publication = hostile.addPublication("ipc", 21);
            TestSupport.await("image", () -> 1 == available.size());
            ((LogImage)available.get(0)).subscriberPosition().setRelease(Long.MAX_VALUE / 2);

            assertConnects(other, 22);
            publication.close();
            subscription.close();
        }
    }

    /** A publisher writes its own log's tail far ahead and an honest client subscribes to it. */
    @Test
    void shouldKeepServingWhenAPublisherWritesItsTailFarAhead() throws Exception
    {
        try (MediaDriver driver = MediaDriver.launch(driverContext());
            Verbus hostile = Verbus.connect(clientContext());
            Verbus honest = Verbus.connect(clientContext()))
        {
            final LogPublication publication = (LogPublication)hostile.addPublication("ipc", 31);
            LogBufferDescriptor.rawTailVolatile(publication.publicationLog().logBuffers().metaDataBuffer(), 0,
                LogBufferDescriptor.packTail(publication.initialTermId() + 0x7fff_0000, 0));
            honest.addSubscription("ipc", 31);

            assertConnects(honest, 32);
        }
    }

    /** Keepalives under made-up client ids: each was a table entry until its liveness timeout, without a bound. */
    @Test
    void shouldHoldAtMostMaxClientsWhenKeepalivesComeUnderMadeUpIds() throws Exception
    {
        try (MediaDriver driver = MediaDriver.launch(driverContext());
            Verbus other = Verbus.connect(clientContext()))
        {
            final ManyToOneRingBuffer ring = commandRing();
            final UnsafeBuffer keepalive = new UnsafeBuffer(new byte[32]);
            for (int i = 0; i < 3 * DriverClients.MAX_CLIENTS; )
            {
                keepalive.putLong(DriverProtocol.CLIENT_ID_OFFSET, 1_000_000_000L + i);
                if (ring.write(DriverProtocol.CLIENT_KEEPALIVE, keepalive, 0, keepalive.capacity()))
                {
                    i++;
                }
            }
            TestSupport.await("the ring drained", () -> ring.consumerPosition() == ring.producerPosition());
            assertEquals(DriverClients.MAX_CLIENTS, driver.clientCount());
            assertConnects(other, 2); // a client the driver knew already is served
        }
    }

    /** An unrelated stream on {@code verbus} connects and carries a message, as the conductor is still running. */
    private static void assertConnects(final Verbus verbus, final int streamId)
    {
        final Publication publication = verbus.addPublication("ipc", streamId);
        final Subscription subscription = verbus.addSubscription("ipc", streamId);
        final UnsafeBuffer message = new UnsafeBuffer(new byte[8]);
        TestSupport.await("stream " + streamId + " carries a message", () -> publication.offer(message) > 0);
        TestSupport.await("stream " + streamId + " delivers it",
            () -> subscription.poll((buffer, offset, length, header) -> { }, 1) > 0);
    }

    private Verbus.Context driverContext()
    {
        return TestSupport.context(tempDir);
    }

    private Verbus.Context clientContext()
    {
        return new Verbus.Context().dir(tempDir.resolve("verbus").toString());
    }

    private ManyToOneRingBuffer commandRing()
    {
        final MappedByteBuffer mapped =
            IoUtil.mapExistingFile(tempDir.resolve("verbus").resolve(CncFile.FILE_NAME).toFile(), "cnc");
        final int toDriverLength = new UnsafeBuffer(mapped).getInt(CncFile.TO_DRIVER_LENGTH_OFFSET);
        return new ManyToOneRingBuffer(new UnsafeBuffer(mapped, CncFile.HEADER_LENGTH, toDriverLength));
    }

    private static int countersOfType(final MediaDriver driver)
    {
        final CountersFile countersFile = CountersFile.openReadOnly(Path.of(driver.dir()));
        final int[] count = {0};
        countersFile.countersReader().forEach((id, typeId, key, label) -> count[0] += TYPE_ID == typeId ? 1 : 0);
        return count[0];
    }
}
