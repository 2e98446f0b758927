package io.verbus;

import io.aeron.DirectBufferVector;
import io.aeron.FragmentAssembler;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import io.aeron.status.ChannelEndpointStatus;
import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The Aeron client calls an Aeron user reaches for (the list of issue 15), each called against a live stream and
 * checked for Aeron's answer. One subclass per kind of channel: {@code ipc} and {@code aeron:ipc} in bus-core,
 * {@code rdma:} in rdma-media. Every call of {@link #AERON_CALLS} must be made, or the test fails naming the ones
 * that were not.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class AeronApiCompatibility
{
    /** The fixed list. */
    public static final List<String> AERON_CALLS = List.of(
        "Publication.offer(DirectBuffer)",
        "Publication.offer(DirectBuffer, int, int, ReservedValueSupplier)",
        "Publication.offer(DirectBuffer, int, int, DirectBuffer, int, int, ReservedValueSupplier)",
        "Publication.offer(DirectBufferVector[])",
        "Publication.offer(DirectBufferVector[], ReservedValueSupplier)",
        "Publication.availableWindow()",
        "Publication.registrationId()",
        "Publication.channelStatus()",
        "Publication.maxPossiblePosition()",
        "Publication.positionBitsToShift()",
        "ExclusivePublication.termId()",
        "ExclusivePublication.termOffset()",
        "ExclusivePublication.appendPadding(int)",
        "ExclusivePublication.offerBlock(MutableDirectBuffer, int, int)",
        "Subscription.blockPoll(BlockHandler, int)",
        "Subscription.rawPoll(RawBlockHandler, int)",
        "Subscription.imageAtIndex(int)",
        "Subscription.forEachImage(Consumer)",
        "Subscription.hasNoImages()",
        "Subscription.registrationId()",
        "Subscription.channelStatus()",
        "Image.boundedPoll(FragmentHandler, long, int)",
        "Image.boundedControlledPoll(ControlledFragmentHandler, long, int)",
        "Image.controlledPeek(long, ControlledFragmentHandler, long)",
        "Image.blockPoll(BlockHandler, int)",
        "Image.rawPoll(RawBlockHandler, int)",
        "Image.isEndOfStream()",
        "Image.endOfStreamPosition()",
        "Image.subscription()",
        "Image.position(long)",
        "Image.mtuLength()",
        "Image.activeTransportCount()",
        "Context.availableImageHandler(AvailableImageHandler)",
        "Context.unavailableImageHandler(UnavailableImageHandler)",
        "Aeron.asyncAddPublication(String, int) + getPublication(long)",
        "Aeron.asyncAddExclusivePublication(String, int) + getExclusivePublication(long)",
        "Aeron.asyncAddSubscription(String, int) + getSubscription(long)",
        "Aeron.addCounter(int, String)",
        "session-specific subscription (session-id=)");

    private static final int MESSAGE_LENGTH = 100;
    private static final long RESERVED_TAG = 0xCAFE_0000_0000L;

    @TempDir
    protected Path tempDir;

    private final Set<String> called = new TreeSet<>();
    private int nextStreamId = 4100;

    /** @return the context to launch Verbus with; handlers are added to it by the test. */
    protected Verbus.Context context(final Path dir)
    {
        return TestSupport.context(dir);
    }

    /** @return a publication channel of this kind, for a new stream. */
    protected abstract String publicationChannel();

    /** @return the subscription channel that reaches {@link #publicationChannel()}. */
    protected abstract String subscriptionChannel();

    /** @return the channel with {@code session-id=} added in its own syntax. */
    protected abstract String withSessionId(String channel, int sessionId);

    /** @return what {@link Image#activeTransportCount()} answers for an open image of this kind. */
    protected abstract int activeTransportCount();

    /** @return true when the channel tells images of the end of the stream when the publication closes. */
    protected abstract boolean signalsEndOfStream();

    private void called(final String call)
    {
        assertTrue(AERON_CALLS.contains(call), "not on the list: " + call);
        called.add(call);
    }

    @Test
    void shouldAnswerEveryAeronCallOnTheListAsAeronDoes()
    {
        final List<Image> announced = new CopyOnWriteArrayList<>();
        final List<Image> withdrawn = new CopyOnWriteArrayList<>();
        final Verbus.Context context = context(tempDir)
            .availableImageHandler(announced::add)
            .unavailableImageHandler(withdrawn::add);
        try (Verbus verbus = Verbus.launch(context))
        {
            final int streamId = nextStreamId++;
            final Subscription subscription = verbus.addSubscription(subscriptionChannel(), streamId);
            final ExclusivePublication publication = verbus.addExclusivePublication(publicationChannel(), streamId);
            awaitConnected(verbus, publication, subscription);

            TestSupport.await("the context's available-image handler", () -> !announced.isEmpty(), verbus::invoke);
            assertSame(subscription, announced.get(0).subscription());
            called("Context.availableImageHandler(AvailableImageHandler)");

            checkPublicationGeometry(publication);
            checkOffers(verbus, publication, subscription);

            // The same offers on a publication many threads may share.
            final int concurrentStreamId = nextStreamId++;
            final Subscription concurrentSubscription =
                verbus.addSubscription(subscriptionChannel(), concurrentStreamId);
            final Publication concurrent = verbus.addPublication(publicationChannel(), concurrentStreamId);
            awaitConnected(verbus, concurrent, concurrentSubscription);
            checkOffers(verbus, concurrent, concurrentSubscription);
            concurrent.close();
            concurrentSubscription.close();

            checkExclusivePublication(verbus, publication, subscription);
            checkSubscriptionAndImage(verbus, publication, subscription);
            checkAsyncAddsAndCounters(verbus);
            checkSessionSpecificSubscriptions(verbus, publication);
            checkEndOfStream(verbus, publication, subscription, withdrawn);
            called("Context.unavailableImageHandler(UnavailableImageHandler)");
        }

        final List<String> missing = new ArrayList<>(AERON_CALLS);
        missing.removeAll(called);
        assertEquals(List.of(), missing, "calls on the list that were not made");
    }

    private void checkPublicationGeometry(final ExclusivePublication publication)
    {
        final int termLength = publication.termBufferLength();
        assertEquals(termLength * (1L << 31), publication.maxPossiblePosition());
        called("Publication.maxPossiblePosition()");
        assertEquals(Integer.numberOfTrailingZeros(termLength), publication.positionBitsToShift());
        called("Publication.positionBitsToShift()");
        assertTrue(publication.registrationId() > 0, "registration id " + publication.registrationId());
        called("Publication.registrationId()");
        assertEquals(ChannelEndpointStatus.ACTIVE, publication.channelStatus());
        called("Publication.channelStatus()");

        final long[] window = new long[3];
        TestSupport.await("a stable window", () ->
        {
            window[0] = publication.positionLimit();
            window[1] = publication.availableWindow();
            window[2] = publication.position();
            return window[0] == publication.positionLimit() && window[1] == window[0] - window[2];
        });
        assertTrue(window[1] > 0, "a connected publication has a window: " + window[1]);
        called("Publication.availableWindow()");

        assertEquals(publication.position(),
            (long)(publication.termId() - publication.initialTermId()) * termLength + publication.termOffset(),
            "termId and termOffset locate the position");
        called("ExclusivePublication.termId()");
        called("ExclusivePublication.termOffset()");
    }

    private void checkOffers(final Verbus verbus, final Publication publication, final Subscription subscription)
    {
        final UnsafeBuffer whole = new UnsafeBuffer(new byte[MESSAGE_LENGTH]);
        fill(whole, 0, MESSAGE_LENGTH, 1);
        offer(verbus, () -> publication.offer(whole));
        Received received = receive(verbus, subscription, 1);
        assertArrayEquals(bytes(whole, 0, MESSAGE_LENGTH), received.messages.get(0));
        called("Publication.offer(DirectBuffer)");

        final ReservedValueSupplier supplier = (termBuffer, termOffset, frameLength) -> RESERVED_TAG + frameLength;
        offer(verbus, () -> publication.offer(whole, 10, 50, supplier));
        received = receive(verbus, subscription, 1);
        assertArrayEquals(bytes(whole, 10, 50), received.messages.get(0));
        assertEquals(RESERVED_TAG + 50 + HEADER_LENGTH, received.reservedValues.get(0));
        called("Publication.offer(DirectBuffer, int, int, ReservedValueSupplier)");

        final UnsafeBuffer second = new UnsafeBuffer(new byte[MESSAGE_LENGTH]);
        fill(second, 0, MESSAGE_LENGTH, 2);
        offer(verbus, () -> publication.offer(whole, 0, 30, second, 0, 40, supplier));
        received = receive(verbus, subscription, 1);
        assertArrayEquals(concat(bytes(whole, 0, 30), bytes(second, 0, 40)), received.messages.get(0));
        assertEquals(RESERVED_TAG + 70 + HEADER_LENGTH, received.reservedValues.get(0));
        called("Publication.offer(DirectBuffer, int, int, DirectBuffer, int, int, ReservedValueSupplier)");

        final DirectBufferVector[] vectors = {
            new DirectBufferVector(whole, 5, 20), new DirectBufferVector(second, 0, 0),
            new DirectBufferVector(second, 7, 33) };
        offer(verbus, () -> publication.offer(vectors));
        received = receive(verbus, subscription, 1);
        assertArrayEquals(concat(bytes(whole, 5, 20), bytes(second, 7, 33)), received.messages.get(0));
        assertEquals(DataHeaderFlyweight.DEFAULT_RESERVE_VALUE, received.reservedValues.get(0));
        called("Publication.offer(DirectBufferVector[])");

        // A gathered message longer than one frame: fragments reassemble, and the supplier sees every fragment.
        final int maxPayload = publication.maxPayloadLength();
        final UnsafeBuffer big = new UnsafeBuffer(new byte[2 * maxPayload + 100]);
        fill(big, 0, big.capacity(), 3);
        final DirectBufferVector[] bigVectors = {
            new DirectBufferVector(big, 0, maxPayload - 10), new DirectBufferVector(big, maxPayload - 10, 110),
            new DirectBufferVector(big, maxPayload + 100, maxPayload) };
        offer(verbus, () -> publication.offer(bigVectors, supplier));
        received = receive(verbus, subscription, 1);
        assertArrayEquals(bytes(big, 0, big.capacity()), received.messages.get(0));
        assertEquals(List.of(RESERVED_TAG + maxPayload + HEADER_LENGTH, RESERVED_TAG + maxPayload + HEADER_LENGTH,
            RESERVED_TAG + 100 + HEADER_LENGTH), received.fragmentReservedValues);
        called("Publication.offer(DirectBufferVector[], ReservedValueSupplier)");

        assertThrows(IllegalArgumentException.class,
            () -> publication.offer(new DirectBufferVector[]{ new DirectBufferVector(whole, 90, 20) }),
            "a vector past its buffer is refused, as Aeron's DirectBufferVector.validate does");
    }

    private void checkExclusivePublication(
        final Verbus verbus, final ExclusivePublication publication, final Subscription subscription)
    {
        final long before = publication.position();
        final long padded = offer(verbus, () -> publication.appendPadding(100));
        assertEquals(before + BitUtil.align(100 + HEADER_LENGTH, FrameDescriptor.FRAME_ALIGNMENT), padded);
        assertThrows(IllegalArgumentException.class, () -> publication.appendPadding(Integer.MAX_VALUE));
        called("ExclusivePublication.appendPadding(int)");

        // A block of two frames formatted as a recording holds them: the first at the publication's current term
        // offset and term id.
        final int blockLength = 2 * BitUtil.align(HEADER_LENGTH + 40, FrameDescriptor.FRAME_ALIGNMENT);
        final UnsafeBuffer block = new UnsafeBuffer(new byte[blockLength]);
        final int frameLength = HEADER_LENGTH + 40;
        writeFrame(block, 0, frameLength, publication.termOffset(), publication.sessionId(), publication.streamId(),
            publication.termId(), 7);
        writeFrame(block, blockLength / 2, frameLength, publication.termOffset() + blockLength / 2,
            publication.sessionId(), publication.streamId(), publication.termId(), 8);

        final UnsafeBuffer wrongTerm = new UnsafeBuffer(block.byteArray().clone());
        wrongTerm.putInt(DataHeaderFlyweight.TERM_ID_FIELD_OFFSET, publication.termId() + 1);
        final IllegalArgumentException mismatch = assertThrows(IllegalArgumentException.class,
            () -> publication.offerBlock(wrongTerm, 0, blockLength));
        assertTrue(mismatch.getMessage().contains("termId=" + (publication.termId() + 1) +
            " (expected=" + publication.termId() + ")"), mismatch.getMessage());
        final UnsafeBuffer wrongOffset = new UnsafeBuffer(block.byteArray().clone());
        wrongOffset.putInt(DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET, publication.termOffset() + 32);
        assertThrows(IllegalArgumentException.class, () -> publication.offerBlock(wrongOffset, 0, blockLength));
        final UnsafeBuffer wrongSession = new UnsafeBuffer(block.byteArray().clone());
        wrongSession.putInt(DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET, publication.sessionId() + 1);
        assertThrows(IllegalArgumentException.class, () -> publication.offerBlock(wrongSession, 0, blockLength));
        final UnsafeBuffer wrongStream = new UnsafeBuffer(block.byteArray().clone());
        wrongStream.putInt(DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET, publication.streamId() + 1);
        assertThrows(IllegalArgumentException.class, () -> publication.offerBlock(wrongStream, 0, blockLength));

        final long beforeBlock = publication.position();
        assertEquals(beforeBlock + blockLength, offer(verbus, () -> publication.offerBlock(block, 0, blockLength)));
        final Received received = receive(verbus, subscription, 2);
        assertEquals(7, received.messages.get(0)[0]);
        assertEquals(8, received.messages.get(1)[0]);
        assertEquals(40, received.messages.get(1).length);
        called("ExclusivePublication.offerBlock(MutableDirectBuffer, int, int)");
    }

    private void checkSubscriptionAndImage(
        final Verbus verbus, final ExclusivePublication publication, final Subscription subscription)
    {
        assertFalse(subscription.hasNoImages());
        called("Subscription.hasNoImages()");
        final Image image = subscription.imageAtIndex(0);
        assertSame(image, subscription.imageBySessionId(publication.sessionId()));
        assertThrows(IndexOutOfBoundsException.class, () -> subscription.imageAtIndex(subscription.imageCount()));
        called("Subscription.imageAtIndex(int)");
        final List<Image> visited = new ArrayList<>();
        subscription.forEachImage(visited::add);
        assertEquals(List.of(image), visited);
        called("Subscription.forEachImage(Consumer)");
        assertTrue(subscription.registrationId() > 0);
        assertNotEquals(publication.registrationId(), subscription.registrationId());
        called("Subscription.registrationId()");
        assertEquals(ChannelEndpointStatus.ACTIVE, subscription.channelStatus());
        called("Subscription.channelStatus()");

        assertSame(subscription, image.subscription());
        called("Image.subscription()");
        assertEquals(publication.maxPayloadLength() + HEADER_LENGTH, image.mtuLength());
        called("Image.mtuLength()");
        assertEquals(activeTransportCount(), image.activeTransportCount());
        called("Image.activeTransportCount()");
        assertFalse(image.isEndOfStream());
        called("Image.isEndOfStream()");
        assertEquals(Long.MAX_VALUE, image.endOfStreamPosition());
        called("Image.endOfStreamPosition()");

        final int framed = BitUtil.align(MESSAGE_LENGTH + HEADER_LENGTH, FrameDescriptor.FRAME_ALIGNMENT);
        final UnsafeBuffer message = new UnsafeBuffer(new byte[MESSAGE_LENGTH]);
        checkImagePeekPollAndPosition(verbus, publication, image, message, framed);
        checkBlockPolls(verbus, publication, subscription, image, message, framed);
        assertEquals(publication.position(), image.position());
    }

    private void checkImagePeekPollAndPosition(
        final Verbus verbus,
        final ExclusivePublication publication,
        final Image image,
        final UnsafeBuffer message,
        final int framed)
    {
        // Three messages: bounded polls stop at a limit, a peek reads ahead without consuming.
        final long start = image.position();
        for (int i = 0; i < 3; i++)
        {
            message.putByte(0, (byte)(10 + i));
            offer(verbus, () -> publication.offer(message));
        }
        final long end = start + 3L * framed;

        final long[] peeked = { start };
        final List<Byte> peekedFirstBytes = new ArrayList<>();
        TestSupport.await("peek of three messages", () ->
        {
            peekedFirstBytes.clear();
            peeked[0] = image.controlledPeek(start, (buffer, offset, length, header) ->
            {
                peekedFirstBytes.add(buffer.getByte(offset));
                return ControlledFragmentHandler.Action.CONTINUE;
            }, end);
            return end == peeked[0];
        }, verbus::invoke);
        assertEquals(List.of((byte)10, (byte)11, (byte)12), peekedFirstBytes);
        assertEquals(start, image.position(), "a peek consumes nothing");
        assertEquals(start + framed, image.controlledPeek(start, (buffer, offset, length, header) ->
            ControlledFragmentHandler.Action.BREAK, end), "BREAK stops after the fragment");
        assertEquals(start, image.controlledPeek(start, (buffer, offset, length, header) ->
            ControlledFragmentHandler.Action.ABORT, end), "ABORT stops before it");
        assertThrows(IllegalArgumentException.class,
            () -> image.controlledPeek(start + 8, (buffer, offset, length, header) ->
                ControlledFragmentHandler.Action.CONTINUE, end), "an unaligned start is refused");
        called("Image.controlledPeek(long, ControlledFragmentHandler, long)");

        final List<Byte> polled = new ArrayList<>();
        final FragmentHandler recordFirstByte = (buffer, offset, length, header) -> polled.add(buffer.getByte(offset));
        assertEquals(1, image.boundedPoll(recordFirstByte, start + framed, 10));
        assertEquals(0, image.boundedPoll(recordFirstByte, start + framed, 10), "nothing at or past the limit");
        assertEquals(start + framed, image.position());
        called("Image.boundedPoll(FragmentHandler, long, int)");

        assertEquals(1, image.boundedControlledPoll((buffer, offset, length, header) ->
        {
            polled.add(buffer.getByte(offset));
            return ControlledFragmentHandler.Action.CONTINUE;
        }, start + 2L * framed, 10));
        assertEquals(List.of((byte)10, (byte)11), polled);
        called("Image.boundedControlledPoll(ControlledFragmentHandler, long, int)");

        assertThrows(
            IllegalArgumentException.class,
            () -> image.position(image.position() - FrameDescriptor.FRAME_ALIGNMENT),
            "backwards is out of range");
        assertThrows(IllegalArgumentException.class, () -> image.position(image.position() + 1),
            "a position must be frame aligned");
        final long termEnd = (image.position() - (image.position() & (image.termBufferLength() - 1))) +
            image.termBufferLength();
        assertThrows(IllegalArgumentException.class, () -> image.position(termEnd + FrameDescriptor.FRAME_ALIGNMENT),
            "past the end of the term is out of range");
        image.position(end);
        assertEquals(end, image.position(), "the third message is skipped by moving the position");
        called("Image.position(long)");
    }

    private void checkBlockPolls(
        final Verbus verbus,
        final ExclusivePublication publication,
        final Subscription subscription,
        final Image image,
        final UnsafeBuffer message,
        final int framed)
    {
        // Block polls: whole frames with the session and term they belong to.
        for (int i = 0; i < 2; i++)
        {
            offer(verbus, () -> publication.offer(message));
        }
        final long[] blockBytes = { 0 };
        final int[] blockIds = new int[2];
        TestSupport.await("an image block", () ->
        {
            blockBytes[0] += image.blockPoll((buffer, offset, length, sessionId, termId) ->
            {
                blockIds[0] = sessionId;
                blockIds[1] = termId;
            }, framed);
            return blockBytes[0] >= framed;
        }, verbus::invoke);
        assertEquals(framed, blockBytes[0], "the block length limit holds a block to one frame");
        assertEquals(publication.sessionId(), blockIds[0]);
        assertEquals(publication.termId(), blockIds[1]);
        called("Image.blockPoll(BlockHandler, int)");

        final FileChannel[] fileChannel = new FileChannel[1];
        TestSupport.await("a raw image block", () ->
        {
            blockBytes[0] += image.rawPoll((channel, fileOffset, termBuffer, termOffset, length, sessionId, termId) ->
            {
                fileChannel[0] = channel;
                assertEquals(publication.sessionId(), sessionId);
                assertEquals(MESSAGE_LENGTH + HEADER_LENGTH, termBuffer.getInt(termOffset));
            }, 1 << 16);
            return blockBytes[0] >= 2L * framed;
        }, verbus::invoke);
        assertEquals(2L * framed, blockBytes[0]);
        called("Image.rawPoll(RawBlockHandler, int)");

        offer(verbus, () -> publication.offer(message));
        offer(verbus, () -> publication.offer(message));
        final long[] subscriptionBytes = { 0 };
        TestSupport.await("subscription blocks", () ->
        {
            subscriptionBytes[0] += subscription.blockPoll((buffer, offset, length, sessionId, termId) ->
                assertEquals(publication.sessionId(), sessionId), framed);
            return subscriptionBytes[0] >= framed;
        }, verbus::invoke);
        called("Subscription.blockPoll(BlockHandler, int)");
        TestSupport.await("subscription raw blocks", () ->
        {
            subscriptionBytes[0] += subscription.rawPoll(
                (channel, fileOffset, termBuffer, termOffset, length, sessionId, termId) ->
                    assertEquals(publication.sessionId(), sessionId), 1 << 16);
            return subscriptionBytes[0] >= 2L * framed;
        }, verbus::invoke);
        assertEquals(2L * framed, subscriptionBytes[0]);
        called("Subscription.rawPoll(RawBlockHandler, int)");
    }

    private void checkAsyncAddsAndCounters(final Verbus verbus)
    {
        final int streamId = nextStreamId++;
        final long publicationId = verbus.asyncAddPublication(publicationChannel(), streamId);
        final Publication publication = verbus.getPublication(publicationId);
        assertEquals(publicationId, publication.registrationId());
        assertSame(publication, verbus.getPublication(publicationId), "returned as long as it is open");
        assertThrows(IllegalStateException.class, () -> verbus.getExclusivePublication(publicationId));
        assertThrows(IllegalStateException.class, () -> verbus.getSubscription(publicationId));
        final long subscriptionId = verbus.asyncAddSubscription(subscriptionChannel(), streamId);
        final Subscription subscription = verbus.getSubscription(subscriptionId);
        assertEquals(subscriptionId, subscription.registrationId());
        called("Aeron.asyncAddSubscription(String, int) + getSubscription(long)");
        publication.close();
        assertNull(verbus.getPublication(publicationId), "a closed publication is no longer returned");
        assertEquals(ChannelEndpointStatus.NO_ID_ALLOCATED, publication.channelStatus());
        subscription.close();
        assertEquals(ChannelEndpointStatus.NO_ID_ALLOCATED, subscription.channelStatus());

        final long failedId = verbus.asyncAddPublication("nosuchscheme:x=y", streamId);
        final IllegalArgumentException failure =
            assertThrows(IllegalArgumentException.class, () -> verbus.getPublication(failedId));
        assertTrue(failure.getMessage().contains("nosuchscheme"), failure.getMessage());
        assertNull(verbus.getPublication(failedId), "the failure is reported once");
        assertNull(verbus.getPublication(Long.MAX_VALUE), "an unknown id is not (yet) a publication");
        called("Aeron.asyncAddPublication(String, int) + getPublication(long)");

        final long exclusiveId = verbus.asyncAddExclusivePublication(publicationChannel(), nextStreamId++);
        final ExclusivePublication exclusive = verbus.getExclusivePublication(exclusiveId);
        assertEquals(exclusiveId, exclusive.registrationId());
        assertThrows(IllegalStateException.class, () -> verbus.getPublication(exclusiveId));
        exclusive.close();
        called("Aeron.asyncAddExclusivePublication(String, int) + getExclusivePublication(long)");

        try (AtomicCounter counter = verbus.addCounter(1001, "orders sent"))
        {
            counter.set(42);
            final CountersReader reader = verbus.countersReader();
            assertEquals("orders sent", reader.getCounterLabel(counter.id()));
            assertEquals(1001, reader.getCounterTypeId(counter.id()));
            assertEquals(42, reader.getCounterValue(counter.id()));
            assertTrue(reader.getCounterRegistrationId(counter.id()) > 0);
        }
        called("Aeron.addCounter(int, String)");
    }

    private void checkSessionSpecificSubscriptions(final Verbus verbus, final ExclusivePublication publication)
    {
        final int sessionId = publication.sessionId();
        final Subscription mine = verbus.addSubscription(withSessionId(subscriptionChannel(), sessionId),
            publication.streamId());
        final Subscription other = verbus.addSubscription(withSessionId(subscriptionChannel(), sessionId + 1),
            publication.streamId());
        TestSupport.await("the session's image", () -> 1 == mine.imageCount(), verbus::invoke);
        assertEquals(sessionId, mine.imageAtIndex(0).sessionId());
        final UnsafeBuffer message = new UnsafeBuffer(new byte[8]);
        offer(verbus, () -> publication.offer(message));
        assertEquals(1, receive(verbus, mine, 1).messages.size());
        TestSupport.sleep(200);
        verbus.invoke();
        assertTrue(other.hasNoImages(), "a subscription for another session gets no image");
        called("session-specific subscription (session-id=)");
        mine.close();
        other.close();
    }

    private void checkEndOfStream(
        final Verbus verbus,
        final ExclusivePublication publication,
        final Subscription subscription,
        final List<Image> withdrawn)
    {
        final Image image = subscription.imageBySessionId(publication.sessionId());
        final UnsafeBuffer message = new UnsafeBuffer(new byte[MESSAGE_LENGTH]);
        offer(verbus, () -> publication.offer(message));
        final long finalPosition = publication.position();
        publication.close();
        assertEquals(ChannelEndpointStatus.NO_ID_ALLOCATED, publication.channelStatus());

        if (signalsEndOfStream())
        {
            TestSupport.await("end of stream", image::isEndOfStream,
                () -> subscription.poll((buffer, offset, length, header) -> {}, 10));
            assertEquals(finalPosition, image.endOfStreamPosition());
            assertEquals(finalPosition, image.position());
        }
        else
        {
            TestSupport.await("the image goes", image::isClosed,
                () -> subscription.poll((buffer, offset, length, header) -> {}, 10));
            assertFalse(image.isEndOfStream(), "no end of stream is signalled on this channel");
            assertEquals(Long.MAX_VALUE, image.endOfStreamPosition());
        }
        TestSupport.await("the context's unavailable-image handler", () -> withdrawn.contains(image),
            () -> subscription.poll((buffer, offset, length, header) -> {}, 10));
        assertEquals(0, image.activeTransportCount(), "a closed image has no transport");
    }

    private void awaitConnected(final Verbus verbus, final Publication publication, final Subscription subscription)
    {
        TestSupport.await("connected", () -> publication.isConnected() && subscription.imageCount() > 0,
            verbus::invoke);
    }

    /** Offers until the call returns a position, within the test's bounds. */
    private static long offer(final Verbus verbus, final java.util.function.LongSupplier offer)
    {
        final long[] result = new long[1];
        TestSupport.await("offer accepted", () ->
        {
            result[0] = offer.getAsLong();
            if (Publication.CLOSED == result[0] || Publication.MAX_POSITION_EXCEEDED == result[0])
            {
                fail("offer failed with " + result[0]);
            }
            return result[0] > 0;
        }, verbus::invoke);
        return result[0];
    }

    private static final class Received
    {
        final List<byte[]> messages = new ArrayList<>();
        final List<Long> reservedValues = new ArrayList<>();
        final List<Long> fragmentReservedValues = new ArrayList<>();
    }

    private static Received receive(final Verbus verbus, final Subscription subscription, final int count)
    {
        final Received received = new Received();
        final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
        {
            received.messages.add(bytes(buffer, offset, length));
            received.reservedValues.add(header.reservedValue());
        });
        final FragmentHandler handler = (buffer, offset, length, header) ->
        {
            received.fragmentReservedValues.add(header.reservedValue());
            assembler.onFragment(buffer, offset, length, header);
        };
        TestSupport.await(count + " messages", () -> received.messages.size() >= count,
            () -> subscription.poll(handler, 10));
        assertEquals(count, received.messages.size());
        return received;
    }

    private static void writeFrame(
        final UnsafeBuffer buffer,
        final int offset,
        final int frameLength,
        final int termOffset,
        final int sessionId,
        final int streamId,
        final int termId,
        final int firstByte)
    {
        buffer.putInt(offset, frameLength, ByteOrder.LITTLE_ENDIAN);
        buffer.putByte(offset + HeaderFlyweight.VERSION_FIELD_OFFSET, HeaderFlyweight.CURRENT_VERSION);
        buffer.putByte(offset + HeaderFlyweight.FLAGS_FIELD_OFFSET, FrameDescriptor.UNFRAGMENTED);
        buffer.putShort(offset + HeaderFlyweight.TYPE_FIELD_OFFSET, (short)HeaderFlyweight.HDR_TYPE_DATA,
            ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET, termOffset, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET, sessionId, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET, streamId, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + DataHeaderFlyweight.TERM_ID_FIELD_OFFSET, termId, ByteOrder.LITTLE_ENDIAN);
        buffer.putByte(offset + HEADER_LENGTH, (byte)firstByte);
    }

    private static void fill(final UnsafeBuffer buffer, final int offset, final int length, final int seed)
    {
        for (int i = 0; i < length; i++)
        {
            buffer.putByte(offset + i, (byte)(seed * 31 + i));
        }
    }

    private static byte[] bytes(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        return bytes;
    }

    private static byte[] concat(final byte[] one, final byte[] two)
    {
        final byte[] both = new byte[one.length + two.length];
        System.arraycopy(one, 0, both, 0, one.length);
        System.arraycopy(two, 0, both, one.length, two.length);
        return both;
    }
}
