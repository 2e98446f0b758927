package io.verbus.gateway;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.BlockHandler;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.RawBlockHandler;
import io.aeron.status.ChannelEndpointStatus;
import io.verbus.ExclusivePublication;
import io.verbus.Image;
import io.verbus.Subscription;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.Consumer;

/**
 * Test double: a bounded in-memory stream that is both the publication and the subscription, so a part can be driven
 * one duty cycle at a time on the test thread, deterministically. Preallocated: offering and polling allocate
 * nothing. It can refuse the next N offers with BACK_PRESSURED, and reports NOT_CONNECTED until connected.
 */
final class LoopbackChannel implements ExclusivePublication, Subscription
{
    private static final int SLOT_LENGTH = 8 * 1024;

    private final UnsafeBuffer[] slots;
    private final int[] lengths;
    private long head;
    private long tail;
    private int refuseNext;
    private boolean connected = true;
    private long offered;

    LoopbackChannel(final int capacity)
    {
        slots = new UnsafeBuffer[capacity];
        lengths = new int[capacity];
        for (int i = 0; i < capacity; i++)
        {
            slots[i] = new UnsafeBuffer(ByteBuffer.allocateDirect(SLOT_LENGTH));
        }
    }

    void refuseNextOffers(final int count)
    {
        refuseNext = count;
    }

    void connected(final boolean connected)
    {
        this.connected = connected;
    }

    int pending()
    {
        return (int)(tail - head);
    }

    long offeredCount()
    {
        return offered;
    }

    /** Copy of pending message i (0 = oldest), for assertions. */
    UnsafeBuffer peek(final int i)
    {
        final int index = (int)((head + i) % slots.length);
        final byte[] copy = new byte[lengths[index]];
        slots[index].getBytes(0, copy);
        return new UnsafeBuffer(copy);
    }

    public long offer(final DirectBuffer buffer, final int offset, final int length)
    {
        if (!connected)
        {
            return NOT_CONNECTED;
        }
        if (refuseNext > 0)
        {
            refuseNext--;
            return BACK_PRESSURED;
        }
        if (tail - head == slots.length)
        {
            return BACK_PRESSURED;
        }
        final int index = (int)(tail % slots.length);
        slots[index].putBytes(0, buffer, offset, length);
        lengths[index] = length;
        tail++;
        offered++;
        return tail * 64;
    }

    public long offer(
        final DirectBuffer bufferOne, final int offsetOne, final int lengthOne,
        final DirectBuffer bufferTwo, final int offsetTwo, final int lengthTwo)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public int flush()
    {
        return 0;
    }

    public long tryClaim(final int length, final BufferClaim bufferClaim)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public int poll(final FragmentHandler fragmentHandler, final int fragmentLimit)
    {
        int fragments = 0;
        while (fragments < fragmentLimit && head < tail)
        {
            final int index = (int)(head % slots.length);
            head++;
            fragments++;
            fragmentHandler.onFragment(slots[index], 0, lengths[index], null);
        }
        return fragments;
    }

    public int controlledPoll(final ControlledFragmentHandler fragmentHandler, final int fragmentLimit)
    {
        int fragments = 0;
        while (fragments < fragmentLimit && head < tail)
        {
            final int index = (int)(head % slots.length);
            final ControlledFragmentHandler.Action action =
                fragmentHandler.onFragment(slots[index], 0, lengths[index], null);
            if (action == ControlledFragmentHandler.Action.ABORT)
            {
                break;
            }
            head++;
            fragments++;
            if (action == ControlledFragmentHandler.Action.BREAK)
            {
                break;
            }
        }
        return fragments;
    }

    public long position()
    {
        return tail * 64;
    }

    public long positionLimit()
    {
        return Long.MAX_VALUE;
    }

    public boolean isConnected()
    {
        return connected;
    }

    public int maxMessageLength()
    {
        return SLOT_LENGTH;
    }

    public int maxPayloadLength()
    {
        return SLOT_LENGTH;
    }

    public String channel()
    {
        return "loopback";
    }

    public int streamId()
    {
        return 1;
    }

    public int sessionId()
    {
        return 1;
    }

    public int initialTermId()
    {
        return 0;
    }

    public int termBufferLength()
    {
        return 64 * 1024;
    }

    public List<Image> images()
    {
        return List.of();
    }

    public int imageCount()
    {
        return connected ? 1 : 0;
    }

    public Image imageBySessionId(final int sessionId)
    {
        return null;
    }

    public boolean isClosed()
    {
        return false;
    }

    public void close()
    {
    }

    // The rest of the Aeron-shaped API is not used by the gateway's parts.

    public long offer(
        final DirectBuffer buffer, final int offset, final int length, final ReservedValueSupplier supplier)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public long offer(
        final DirectBuffer bufferOne, final int offsetOne, final int lengthOne,
        final DirectBuffer bufferTwo, final int offsetTwo, final int lengthTwo,
        final ReservedValueSupplier supplier)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public long offer(final DirectBufferVector[] vectors, final ReservedValueSupplier supplier)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public long availableWindow()
    {
        return Long.MAX_VALUE - position();
    }

    public long registrationId()
    {
        return 1;
    }

    public long originalRegistrationId()
    {
        return 1;
    }

    public long channelStatus()
    {
        return ChannelEndpointStatus.ACTIVE;
    }

    public long maxPossiblePosition()
    {
        return Long.MAX_VALUE;
    }

    public int positionBitsToShift()
    {
        return 16;
    }

    public int termId()
    {
        return 0;
    }

    public int termOffset()
    {
        return 0;
    }

    public long appendPadding(final int length)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public long offerBlock(final MutableDirectBuffer buffer, final int offset, final int length)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public long blockPoll(final BlockHandler blockHandler, final int blockLengthLimit)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public long rawPoll(final RawBlockHandler rawBlockHandler, final int blockLengthLimit)
    {
        throw new UnsupportedOperationException("not used by the gateway");
    }

    public Image imageAtIndex(final int index)
    {
        throw new IndexOutOfBoundsException(index);
    }

    public void forEachImage(final Consumer<Image> consumer)
    {
    }

    public boolean hasNoImages()
    {
        return true;
    }
}
