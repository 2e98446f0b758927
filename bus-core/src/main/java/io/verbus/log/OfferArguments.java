package io.verbus.log;

import org.agrona.DirectBuffer;

/**
 * Argument checks shared by every publication and subscription (native and {@code aeron:}), so that a bad call fails
 * with an {@link IllegalArgumentException} naming the argument before anything changes, never with a raw
 * {@code NullPointerException} or {@code IndexOutOfBoundsException} from Agrona after space was claimed.
 */
public final class OfferArguments
{
    private OfferArguments()
    {
    }

    /**
     * @param buffer to copy from.
     * @param offset of the message in it.
     * @param length of the message.
     * @param name   of the argument, for the message.
     * @throws IllegalArgumentException when the buffer is null or {@code [offset, offset + length)} is not inside it.
     */
    public static void checkBuffer(final DirectBuffer buffer, final int offset, final int length, final String name)
    {
        if (null == buffer)
        {
            throw new IllegalArgumentException("offer: " + name + " must not be null");
        }
        if (length < 0)
        {
            throw new IllegalArgumentException("message length must not be negative: " + length);
        }
        if (offset < 0 || (long)offset + length > buffer.capacity())
        {
            throw new IllegalArgumentException("offer: " + name + " range [offset " + offset + ", length " + length +
                "] is not within its capacity " + buffer.capacity());
        }
    }

    /**
     * @param vectors of a gathered offer: the array and each element must be there (Aeron's own validation would
     *                throw a NullPointerException for either).
     * @throws IllegalArgumentException naming the missing one.
     */
    public static void checkVectorsNotNull(final io.aeron.DirectBufferVector[] vectors)
    {
        checkNotNull(vectors, "offer: vectors");
        for (int i = 0; i < vectors.length; i++)
        {
            if (null == vectors[i] || null == vectors[i].buffer())
            {
                throw new IllegalArgumentException("offer: vectors[" + i + "]" +
                    (null == vectors[i] ? "" : ".buffer") + " must not be null");
            }
        }
    }

    /**
     * @param argument that must not be null.
     * @param what     names it and the call, e.g. {@code "tryClaim: bufferClaim"}.
     * @throws IllegalArgumentException when it is null.
     */
    public static void checkNotNull(final Object argument, final String what)
    {
        if (null == argument)
        {
            throw new IllegalArgumentException(what + " must not be null");
        }
    }
}
