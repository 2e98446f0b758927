package io.verbus.fabric.shm;

import io.verbus.fabric.soft.SoftProtectionDomain;
import io.verbus.fabric.soft.SoftSharedReceiveQueue;

import java.lang.foreign.MemorySegment;

/**
 * An shm SRQ: its claim header is the file {@code srq-<number>} of the device, which the QPs using it name in their
 * own files so that an initiating peer can map it and claim a receive.
 */
final class ShmSharedReceiveQueue extends SoftSharedReceiveQueue
{
    private final int number;

    ShmSharedReceiveQueue(
        final SoftProtectionDomain pd, final int depth, final MemorySegment header, final int number,
        final Runnable onClose)
    {
        super(pd, depth, header, onClose);
        this.number = number;
    }

    /**
     * @return the n of the {@code srq-<n>} file, never 0.
     */
    int number()
    {
        return number;
    }
}
