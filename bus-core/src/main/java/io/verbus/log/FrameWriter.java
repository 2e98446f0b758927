package io.verbus.log;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * Writes frames into a term in Aeron's data frame format. The order that makes a frame visible is the whole
 * point: every header field and the payload are written with plain stores, then the frame length (the first
 * field) is stored with release semantics. A reader that acquires a non-zero length sees the complete frame.
 */
public final class FrameWriter
{
    static
    {
        // The frame fields are little-endian on the wire and in the log; plain stores are only correct on such a CPU.
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN)
        {
            throw new ExceptionInInitializerError("Verbus logs need a little-endian CPU");
        }
    }

    private FrameWriter()
    {
    }

    /**
     * Writes every header field but the frame length.
     *
     * @param termBuffer to write into.
     * @param termOffset of the frame.
     * @param flags      BEGIN/END fragment flags.
     * @param type       {@link HeaderFlyweight#HDR_TYPE_DATA} or {@link HeaderFlyweight#HDR_TYPE_PAD}.
     * @param sessionId  of the publication.
     * @param streamId   of the publication.
     * @param termId     of the term.
     */
    public static void writeHeader(
        final UnsafeBuffer termBuffer,
        final int termOffset,
        final byte flags,
        final int type,
        final int sessionId,
        final int streamId,
        final int termId)
    {
        termBuffer.putByte(termOffset + HeaderFlyweight.VERSION_FIELD_OFFSET, HeaderFlyweight.CURRENT_VERSION);
        termBuffer.putByte(termOffset + HeaderFlyweight.FLAGS_FIELD_OFFSET, flags);
        termBuffer.putShort(termOffset + HeaderFlyweight.TYPE_FIELD_OFFSET, (short)type);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET, termOffset);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET, sessionId);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET, streamId);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.TERM_ID_FIELD_OFFSET, termId);
        termBuffer.putLong(
            termOffset + DataHeaderFlyweight.RESERVED_VALUE_OFFSET, DataHeaderFlyweight.DEFAULT_RESERVE_VALUE);
    }

    /**
     * Writes every header field, starting with a release store of the first eight bytes: the frame length
     * <em>negated</em>, the version, the flags and the type. Readers treat a length of zero or less as "not yet
     * written", exactly as before; what the negative length adds is that space claimed but never committed (a
     * writer that died, a claim never committed or aborted) says how long it is, so the conductor can pad over it
     * exactly after the unblock timeout (see {@link LogUnblocker}). Aeron writes its headers the same way.
     *
     * @param termBuffer  to write into.
     * @param termOffset  of the frame.
     * @param frameLength the length the frame will be published with (header plus payload, unaligned).
     * @param flags       BEGIN/END fragment flags.
     * @param type        {@link HeaderFlyweight#HDR_TYPE_DATA} or {@link HeaderFlyweight#HDR_TYPE_PAD}.
     * @param sessionId   of the publication.
     * @param streamId    of the publication.
     * @param termId      of the term.
     */
    public static void writeHeader(
        final UnsafeBuffer termBuffer,
        final int termOffset,
        final int frameLength,
        final byte flags,
        final int type,
        final int sessionId,
        final int streamId,
        final int termId)
    {
        termBuffer.putLongRelease(termOffset, firstHeaderWord(-frameLength, flags, type));
        termBuffer.putInt(termOffset + DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET, termOffset);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET, sessionId);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET, streamId);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.TERM_ID_FIELD_OFFSET, termId);
        termBuffer.putLong(
            termOffset + DataHeaderFlyweight.RESERVED_VALUE_OFFSET, DataHeaderFlyweight.DEFAULT_RESERVE_VALUE);
    }

    /**
     * @param termBuffer holding the frame.
     * @param termOffset where the frame is read.
     * @return the frame's type field, unsigned.
     */
    public static int frameType(final DirectBuffer termBuffer, final int termOffset)
    {
        return termBuffer.getShort(termOffset + HeaderFlyweight.TYPE_FIELD_OFFSET) & 0xFFFF;
    }

    /**
     * @param type a frame's type ({@link #frameType}).
     * @return true for the types a log holds: data and padding. A reader of a log another process writes refuses the
     * rest rather than hand them on as data.
     */
    public static boolean isLogFrameType(final int type)
    {
        return HeaderFlyweight.HDR_TYPE_DATA == type || HeaderFlyweight.HDR_TYPE_PAD == type;
    }

    /**
     * Whether the header of the frame at {@code termOffset} names that term offset and the given session, stream and
     * term, as {@link #writeHeader} writes them: what a reader of a log that another process writes (a remote ring, a
     * catch-up READ) checks before it takes the frame for the one due there.
     *
     * @param termBuffer holding the frame.
     * @param termOffset where the frame is read.
     * @param sessionId  the session it must name.
     * @param streamId   the stream it must name.
     * @param termId     the term it must name.
     * @return true when all four match.
     */
    public static boolean isHeaderAt(
        final DirectBuffer termBuffer, final int termOffset, final int sessionId, final int streamId, final int termId)
    {
        return termBuffer.getInt(termOffset + DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET) == termOffset &&
            termBuffer.getInt(termOffset + DataHeaderFlyweight.TERM_ID_FIELD_OFFSET) == termId &&
            termBuffer.getInt(termOffset + DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET) == sessionId &&
            termBuffer.getInt(termOffset + DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET) == streamId;
    }

    /**
     * Whether a frame whose length was just read (acquire) is one a writer keeping to the log's rules committed: at
     * least a header long, within the term, and with a header naming where it is ({@link #isHeaderAt}). The raw
     * length is compared with the room left in the term, so a huge length cannot wrap when aligned. What the media's
     * sender, the driver's unblock check and the unblocker itself take a frame for before moving past it.
     *
     * @param termBuffer  holding the frame.
     * @param termOffset  where the frame is read, frame aligned.
     * @param frameLength the frame's length word, already read.
     * @param sessionId   the session it must name.
     * @param streamId    the stream it must name.
     * @param termId      the term it must name.
     * @return true when the frame is sound; false for a hole (length 0 or negative) or a corrupt frame.
     */
    public static boolean isSoundFrame(
        final DirectBuffer termBuffer,
        final int termOffset,
        final int frameLength,
        final int sessionId,
        final int streamId,
        final int termId)
    {
        return frameLength >= DataHeaderFlyweight.HEADER_LENGTH &&
            frameLength <= termBuffer.capacity() - termOffset &&
            isHeaderAt(termBuffer, termOffset, sessionId, streamId, termId);
    }

    /**
     * @return the first eight bytes of a frame header as one little-endian word: frame length, version, flags,
     * type. Storing or compare-and-setting them as one word is what lets the unblocker replace an uncommitted
     * header atomically.
     */
    public static long firstHeaderWord(final int frameLength, final byte flags, final int type)
    {
        return (frameLength & 0xFFFF_FFFFL) |
            ((HeaderFlyweight.CURRENT_VERSION & 0xFFL) << 32) |
            ((flags & 0xFFL) << 40) |
            ((type & 0xFFFFL) << 48);
    }

    /**
     * Makes a written frame visible to readers: the release store of its length.
     */
    public static void publishFrameLength(final UnsafeBuffer termBuffer, final int termOffset, final int frameLength)
    {
        termBuffer.putIntRelease(termOffset + HeaderFlyweight.FRAME_LENGTH_FIELD_OFFSET, frameLength);
    }

    /**
     * Fills the rest of a term with one padding frame that readers skip, when a message does not fit.
     *
     * @param termBuffer   to pad.
     * @param termOffset   where the padding starts (aligned).
     * @param sessionId    of the publication.
     * @param streamId     of the publication.
     * @param termId       of the term.
     */
    public static void writePaddingToTermEnd(
        final UnsafeBuffer termBuffer, final int termOffset, final int sessionId, final int streamId, final int termId)
    {
        final int paddingLength = termBuffer.capacity() - termOffset;
        writeHeader(termBuffer, termOffset, paddingLength, FrameDescriptor.UNFRAGMENTED, HeaderFlyweight.HDR_TYPE_PAD,
            sessionId, streamId, termId);
        publishFrameLength(termBuffer, termOffset, paddingLength);
    }

    /**
     * Copies {@code length} bytes of a message that is the concatenation of two buffers, starting at
     * {@code messageOffset} within the message, to {@code dstOffset} in the term.
     */
    public static void copyPayload(
        final UnsafeBuffer termBuffer,
        final int dstOffset,
        final DirectBuffer bufferOne,
        final int offsetOne,
        final int lengthOne,
        final DirectBuffer bufferTwo,
        final int offsetTwo,
        final int messageOffset,
        final int length)
    {
        if (messageOffset + length <= lengthOne)
        {
            termBuffer.putBytes(dstOffset, bufferOne, offsetOne + messageOffset, length);
        }
        else if (messageOffset >= lengthOne)
        {
            termBuffer.putBytes(dstOffset, bufferTwo, offsetTwo + messageOffset - lengthOne, length);
        }
        else
        {
            final int partOne = lengthOne - messageOffset;
            termBuffer.putBytes(dstOffset, bufferOne, offsetOne + messageOffset, partOne);
            termBuffer.putBytes(dstOffset + partOne, bufferTwo, offsetTwo, length - partOne);
        }
    }

    /**
     * Writes a whole message as one frame or a run of fragments starting at {@code termOffset}, whose space the
     * caller has already claimed ({@link #framedLength(int, int)} bytes). Each fragment is published as written.
     */
    public static void writeMessage(
        final UnsafeBuffer termBuffer,
        final int termOffset,
        final int maxPayloadLength,
        final int sessionId,
        final int streamId,
        final int termId,
        final DirectBuffer bufferOne,
        final int offsetOne,
        final int lengthOne,
        final DirectBuffer bufferTwo,
        final int offsetTwo,
        final int lengthTwo)
    {
        writeMessage(termBuffer, termOffset, maxPayloadLength, sessionId, streamId, termId,
            bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo, null);
    }

    /**
     * As {@link #writeMessage(UnsafeBuffer, int, int, int, int, int, DirectBuffer, int, int, DirectBuffer, int, int)},
     * and when a supplier is given, each frame's reserved value is what it returns for that frame: called after the
     * payload is written and before the frame length is published, as Aeron's appenders call it.
     */
    public static void writeMessage(
        final UnsafeBuffer termBuffer,
        final int termOffset,
        final int maxPayloadLength,
        final int sessionId,
        final int streamId,
        final int termId,
        final DirectBuffer bufferOne,
        final int offsetOne,
        final int lengthOne,
        final DirectBuffer bufferTwo,
        final int offsetTwo,
        final int lengthTwo,
        final ReservedValueSupplier reservedValueSupplier)
    {
        final int messageLength = lengthOne + lengthTwo;
        if (messageLength <= maxPayloadLength)
        {
            writeHeader(termBuffer, termOffset, messageLength + HEADER_LENGTH, FrameDescriptor.UNFRAGMENTED,
                HeaderFlyweight.HDR_TYPE_DATA, sessionId, streamId, termId);
            copyPayload(termBuffer, termOffset + HEADER_LENGTH, bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo,
                0, messageLength);
            publishFrame(termBuffer, termOffset, messageLength + HEADER_LENGTH, reservedValueSupplier);
            return;
        }

        int frameOffset = termOffset;
        int messageOffset = 0;
        byte flags = FrameDescriptor.BEGIN_FRAG_FLAG;
        while (messageOffset < messageLength)
        {
            final int chunkLength = Math.min(maxPayloadLength, messageLength - messageOffset);
            if (messageOffset + chunkLength == messageLength)
            {
                flags |= FrameDescriptor.END_FRAG_FLAG;
            }
            writeHeader(termBuffer, frameOffset, chunkLength + HEADER_LENGTH, flags, HeaderFlyweight.HDR_TYPE_DATA,
                sessionId, streamId, termId);
            copyPayload(termBuffer, frameOffset + HEADER_LENGTH, bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo,
                messageOffset, chunkLength);
            publishFrame(termBuffer, frameOffset, chunkLength + HEADER_LENGTH, reservedValueSupplier);

            frameOffset += align(chunkLength + HEADER_LENGTH);
            messageOffset += chunkLength;
            flags = 0;
        }
    }

    /**
     * Writes a message gathered from vectors, as one frame or a run of fragments, into space already claimed
     * ({@link #framedLength(int, int)} bytes of {@code messageLength}). Each fragment is published as written.
     *
     * @param vectors               the message's parts in order, already validated.
     * @param messageLength         the sum of the vectors' lengths.
     * @param reservedValueSupplier for each frame's reserved value, or null.
     */
    public static void writeMessage(
        final UnsafeBuffer termBuffer,
        final int termOffset,
        final int maxPayloadLength,
        final int sessionId,
        final int streamId,
        final int termId,
        final DirectBufferVector[] vectors,
        final int messageLength,
        final ReservedValueSupplier reservedValueSupplier)
    {
        int frameOffset = termOffset;
        int messageOffset = 0;
        int vectorIndex = 0;
        int vectorOffset = 0;
        byte flags = messageLength <= maxPayloadLength ? FrameDescriptor.UNFRAGMENTED : FrameDescriptor.BEGIN_FRAG_FLAG;
        do
        {
            final int chunkLength = Math.min(maxPayloadLength, messageLength - messageOffset);
            if (messageOffset + chunkLength == messageLength)
            {
                flags |= FrameDescriptor.END_FRAG_FLAG;
            }
            writeHeader(termBuffer, frameOffset, flags, HeaderFlyweight.HDR_TYPE_DATA, sessionId, streamId, termId);

            int written = 0;
            while (written < chunkLength)
            {
                final DirectBufferVector vector = vectors[vectorIndex];
                final int vectorRemaining = vector.length() - vectorOffset;
                final int count = Math.min(chunkLength - written, vectorRemaining);
                termBuffer.putBytes(
                    frameOffset + HEADER_LENGTH + written, vector.buffer(), vector.offset() + vectorOffset, count);
                written += count;
                vectorOffset += count;
                if (count == vectorRemaining)
                {
                    vectorIndex++;
                    vectorOffset = 0;
                }
            }
            publishFrame(termBuffer, frameOffset, chunkLength + HEADER_LENGTH, reservedValueSupplier);

            frameOffset += align(chunkLength + HEADER_LENGTH);
            messageOffset += chunkLength;
            flags = 0;
        }
        while (messageOffset < messageLength);
    }

    /**
     * Writes one padding frame of {@code frameLength} bytes (header included) at {@code termOffset}, which readers
     * skip, into space already claimed.
     */
    public static void writePadding(
        final UnsafeBuffer termBuffer,
        final int termOffset,
        final int frameLength,
        final int sessionId,
        final int streamId,
        final int termId)
    {
        writeHeader(termBuffer, termOffset, FrameDescriptor.UNFRAGMENTED, HeaderFlyweight.HDR_TYPE_PAD,
            sessionId, streamId, termId);
        publishFrameLength(termBuffer, termOffset, frameLength);
    }

    /**
     * Copies a block of formatted frames into the term at {@code termOffset}, into space already claimed. The first
     * frame's header goes last and its first word (length, version, flags, type) with release semantics: until then
     * a reader sees a zero length there and nothing of the block; after it, every later frame of the block, whose
     * lengths were stored before it.
     */
    public static void writeBlock(
        final UnsafeBuffer termBuffer,
        final int termOffset,
        final DirectBuffer buffer,
        final int offset,
        final int length)
    {
        termBuffer.putBytes(termOffset + HEADER_LENGTH, buffer, offset + HEADER_LENGTH, length - HEADER_LENGTH);
        termBuffer.putLong(termOffset + 24, buffer.getLong(offset + 24));
        termBuffer.putLong(termOffset + 16, buffer.getLong(offset + 16));
        termBuffer.putLong(termOffset + 8, buffer.getLong(offset + 8));
        termBuffer.putLongRelease(termOffset, buffer.getLong(offset));
    }

    private static void publishFrame(
        final UnsafeBuffer termBuffer,
        final int frameOffset,
        final int frameLength,
        final ReservedValueSupplier reservedValueSupplier)
    {
        if (null != reservedValueSupplier)
        {
            termBuffer.putLong(frameOffset + DataHeaderFlyweight.RESERVED_VALUE_OFFSET,
                reservedValueSupplier.get(termBuffer, frameOffset, frameLength));
        }
        publishFrameLength(termBuffer, frameOffset, frameLength);
    }

    /**
     * @return the bytes a message takes in a term: one aligned frame, or full fragments plus an aligned last one.
     */
    public static int framedLength(final int messageLength, final int maxPayloadLength)
    {
        if (messageLength <= maxPayloadLength)
        {
            return align(messageLength + HEADER_LENGTH);
        }
        final int fullFragments = messageLength / maxPayloadLength;
        final int remainder = messageLength - fullFragments * maxPayloadLength;
        final int fullFrameLength = align(maxPayloadLength + HEADER_LENGTH);
        return fullFragments * fullFrameLength + (remainder > 0 ? align(remainder + HEADER_LENGTH) : 0);
    }

    /** @return a length rounded up to the 32-byte frame alignment. */
    public static int align(final int length)
    {
        return (length + FrameDescriptor.FRAME_ALIGNMENT - 1) & -FrameDescriptor.FRAME_ALIGNMENT;
    }
}
