package io.verbus.archive;

import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.verbus.Publication;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

/**
 * Republishes replayed frames into any Verbus publication so that the target's log is laid out as the recording's:
 * <ul>
 *   <li>an unfragmented message is claimed at its length and keeps its flags and reserved value;</li>
 *   <li>a fragmented message is gathered and offered whole, as its publisher did, so the target fragments it again
 *   at the same MTU and, like the original writer, pads to the term end first when the whole message does not fit
 *   (which frame-by-frame claims would not reproduce).</li>
 * </ul>
 * The frames then carry the target publication's session id, stream id and term ids; payloads, frame lengths and
 * flags are the recording's, and positions equal the recorded ones when the target's log starts where the replay
 * starts, with the same term length and MTU (a replay from 0 into a new publication, or an {@code aeron:} channel
 * created with the recording's {@code init-term-id}, {@code term-id} and {@code term-offset}). A replay that starts
 * inside a fragmented message skips to the next whole one.
 * <p>
 * Use with {@link ArchiveReplay#controlledPoll}: a back-pressured or unconnected target aborts the frame, which the
 * next poll delivers again.
 */
public final class ReplayPublisher implements ControlledFragmentHandler
{
    private final Publication publication;
    private final BufferClaim bufferClaim = new BufferClaim();
    private final ExpandableArrayBuffer messageBuffer = new ExpandableArrayBuffer(4096);
    private int messageLength;
    private boolean isGathering;
    private long gatheredToPosition = -1;
    private long framesPublished;
    private long messagesPublished;
    private long lastResult;

    /**
     * @param publication to write into, with the recording's term length and MTU for the same layout.
     */
    public ReplayPublisher(final Publication publication)
    {
        this.publication = publication;
    }

    public Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final byte flags = header.flags();
        if (FrameDescriptor.UNFRAGMENTED == (flags & FrameDescriptor.UNFRAGMENTED))
        {
            return claim(buffer, offset, length, header);
        }

        if (header.position() > gatheredToPosition)
        {
            if (0 != (flags & FrameDescriptor.BEGIN_FRAG_FLAG))
            {
                isGathering = true;
                messageLength = 0;
            }
            if (!isGathering)
            {
                return Action.CONTINUE;
            }
            messageBuffer.putBytes(messageLength, buffer, offset, length);
            messageLength += length;
            gatheredToPosition = header.position();
        }
        if (0 == (flags & FrameDescriptor.END_FRAG_FLAG))
        {
            framesPublished++;
            return Action.CONTINUE;
        }

        final long result = offerWhole();
        if (result <= 0)
        {
            return Action.ABORT;
        }
        isGathering = false;
        framesPublished++;
        messagesPublished++;
        return Action.CONTINUE;
    }

    private Action claim(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        long result;
        while (Publication.ADMIN_ACTION == (result = publication.tryClaim(length, bufferClaim)))
        {
            // the target rotated to its next term: claim again there
        }
        lastResult = result;
        if (result <= 0)
        {
            checkUsable(result);
            return Action.ABORT;
        }
        bufferClaim.putBytes(buffer, offset, length);
        bufferClaim.flags(header.flags());
        bufferClaim.reservedValue(header.reservedValue());
        bufferClaim.commit();
        framesPublished++;
        messagesPublished++;
        return Action.CONTINUE;
    }

    private long offerWhole()
    {
        long result;
        while (Publication.ADMIN_ACTION == (result = publication.offer(messageBuffer, 0, messageLength)))
        {
            // padded to the term end, as the original writer did: offer again in the next term
        }
        lastResult = result;
        checkUsable(result);
        return result;
    }

    private void checkUsable(final long result)
    {
        if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result)
        {
            throw new IllegalStateException("replay target " + publication.channel() + " refused a frame: " + result);
        }
    }

    /** @return frames of the recording republished so far. */
    public long framesPublished()
    {
        return framesPublished;
    }

    /** @return whole messages republished so far. */
    public long messagesPublished()
    {
        return messagesPublished;
    }

    /** @return the target's last result: its position, or a negative Publication code. */
    public long lastResult()
    {
        return lastResult;
    }
}
