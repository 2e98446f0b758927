package io.verbus.media.rdma;

import io.verbus.media.rdma.protocol.HandshakeException;

import java.lang.foreign.MemorySegment;

/**
 * Fixed-size blocks carved from one registered-once allocation: the publisher's per-subscriber status slots,
 * the subscriber's position blocks. A block is registered as its own region for exactly one peer (so an rkey
 * grants that block and nothing else), and goes back to the pool when that peer's region is deregistered.
 */
final class BlockPool
{
    private final MemorySegment memory;
    private final int blockLength;
    private final boolean[] used;

    BlockPool(final MemorySegment memory, final int blockLength)
    {
        this.memory = memory;
        this.blockLength = blockLength;
        this.used = new boolean[(int)(memory.byteSize() / blockLength)];
    }

    /** @return a zeroed block. */
    synchronized int acquire() throws HandshakeException
    {
        for (int i = 0; i < used.length; i++)
        {
            if (!used[i])
            {
                used[i] = true;
                block(i).fill((byte)0);
                return i;
            }
        }
        throw new HandshakeException(HandshakeException.Reason.RESOURCES, "all " + used.length +
            " connection slots are in use");
    }

    MemorySegment block(final int index)
    {
        return memory.asSlice((long)index * blockLength, blockLength);
    }

    synchronized void release(final int index)
    {
        used[index] = false;
    }

    synchronized int inUse()
    {
        int count = 0;
        for (final boolean u : used)
        {
            count += u ? 1 : 0;
        }
        return count;
    }

    int capacity()
    {
        return used.length;
    }
}
