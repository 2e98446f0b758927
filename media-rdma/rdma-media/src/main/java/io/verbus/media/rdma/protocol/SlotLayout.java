package io.verbus.media.rdma.protocol;

import org.agrona.concurrent.AtomicBuffer;

/**
 * The two small remote-writable blocks, one cache line each, that carry positions and heartbeats.
 * <pre>
 *  position block (subscriber side, the publisher WRITEs it after the data):
 *    0 position long | 8 publisher heartbeat timestamp long | 16 check long
 *  status slot (publisher side, one per subscriber, the subscriber WRITEs it):
 *    0 consumed position long | 8 subscriber heartbeat timestamp long | 16 check long
 * </pre>
 * A WRITE places its bytes in no promised order, and the fault injection reorders them, so a reader may
 * catch a block half-written. The check word is a strong 64-bit mix of the two values: a torn read fails
 * the check (a false pass needs a 64-bit collision) and the reader keeps its last good value until the
 * WRITE has landed.
 */
public final class SlotLayout
{
    public static final int VALUE_OFFSET = 0;
    public static final int TIMESTAMP_OFFSET = 8;
    public static final int CHECK_OFFSET = 16;
    /** The bytes a WRITE of a block carries. */
    public static final int WRITE_LENGTH = 24;
    /** The registered length of a block: a cache line, so no two blocks share one. */
    public static final int BLOCK_LENGTH = 64;

    private static final long CHECK_SEED = 0x5652_4253_2d72_646dL;

    private SlotLayout()
    {
    }

    /**
     * The timestamp of the last position block a closing publication writes, after its last data: the position is
     * then the end of the stream (a clock reading never takes this value).
     */
    public static final long END_OF_STREAM_TIMESTAMP = Long.MIN_VALUE;

    /** The check word for a value and timestamp: stays fixed across releases (it is on the wire). */
    public static long check(final long value, final long timestamp)
    {
        return mix(mix(value ^ CHECK_SEED) + Long.rotateLeft(timestamp, 29));
    }

    /** Fill a 24-byte block image (native order: the peer is the same layout on the same architecture). */
    public static void encode(final AtomicBuffer buffer, final int offset, final long value, final long timestamp)
    {
        buffer.putLong(offset + VALUE_OFFSET, value);
        buffer.putLong(offset + TIMESTAMP_OFFSET, timestamp);
        buffer.putLong(offset + CHECK_OFFSET, check(value, timestamp));
    }

    /**
     * Read a block; true when consistent. The value and timestamp land in {@code out[0]} and {@code out[1]}.
     */
    public static boolean read(final AtomicBuffer buffer, final int offset, final long[] out)
    {
        final long check = buffer.getLongVolatile(offset + CHECK_OFFSET);
        final long value = buffer.getLongVolatile(offset + VALUE_OFFSET);
        final long timestamp = buffer.getLongVolatile(offset + TIMESTAMP_OFFSET);
        if (check != check(value, timestamp) || check != buffer.getLongVolatile(offset + CHECK_OFFSET))
        {
            return false;
        }
        out[0] = value;
        out[1] = timestamp;
        return true;
    }

    private static long mix(final long v)
    {
        long z = v;
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }
}
