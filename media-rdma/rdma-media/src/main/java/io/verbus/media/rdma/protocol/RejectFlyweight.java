package io.verbus.media.rdma.protocol;

import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * REJECT, either way: a reason code and a short ASCII text, then the connection closes.
 * <pre>
 *  12 reason int | 16 textLength int | 20 text (at most {@link #MAX_TEXT_LENGTH} bytes)
 * </pre>
 */
public final class RejectFlyweight
{
    public static final int REASON_OFFSET = 12;
    public static final int TEXT_LENGTH_OFFSET = 16;
    public static final int TEXT_OFFSET = 20;
    public static final int MAX_TEXT_LENGTH = 200;
    public static final int MIN_LENGTH = TEXT_OFFSET;
    public static final int MAX_LENGTH = TEXT_OFFSET + MAX_TEXT_LENGTH;

    private MutableDirectBuffer buffer;
    private int offset;

    public RejectFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Write a whole REJECT message.
     *
     * @return its length.
     */
    public int encode(final HandshakeException.Reason reason, final String text)
    {
        final byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        final int length = Math.min(bytes.length, MAX_TEXT_LENGTH);
        HandshakeHeader.write(buffer, offset, HandshakeHeader.REJECT_TYPE, TEXT_OFFSET + length);
        buffer.putInt(offset + REASON_OFFSET, reason.code(), LITTLE_ENDIAN);
        buffer.putInt(offset + TEXT_LENGTH_OFFSET, length, LITTLE_ENDIAN);
        buffer.putBytes(offset + TEXT_OFFSET, bytes, 0, length);
        return TEXT_OFFSET + length;
    }

    public int reasonCode()
    {
        return buffer.getInt(offset + REASON_OFFSET, LITTLE_ENDIAN);
    }

    public int textLength()
    {
        return buffer.getInt(offset + TEXT_LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    /** The text, clamped to the message so that a lying length cannot read past it; non-printables dropped. */
    public String text(final int messageLength)
    {
        final int length = Math.max(0, Math.min(textLength(), Math.min(MAX_TEXT_LENGTH, messageLength - TEXT_OFFSET)));
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset + TEXT_OFFSET, bytes, 0, length);
        final StringBuilder sb = new StringBuilder(length);
        for (final byte b : bytes)
        {
            sb.append(b >= 0x20 && b < 0x7f ? (char)b : '?');
        }
        return sb.toString();
    }
}
