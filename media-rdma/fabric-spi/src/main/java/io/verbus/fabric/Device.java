package io.verbus.fabric;

import java.lang.foreign.MemorySegment;

/**
 * An opened RDMA device (a NIC, or a soft provider's emulation of one).
 */
public interface Device extends AutoCloseable
{
    /**
     * @return name, provider, limits and ports.
     */
    DeviceAttributes attributes();

    /**
     * @return a new protection domain.
     */
    ProtectionDomain allocateProtectionDomain();

    /**
     * @param depth entries; at most {@link DeviceAttributes#maxCompletionQueueEntries()}.
     * @return a new completion queue.
     */
    default CompletionQueue createCompletionQueue(final int depth)
    {
        return createCompletionQueue(depth, null);
    }

    /**
     * @param depth   entries; at most {@link DeviceAttributes#maxCompletionQueueEntries()}.
     * @param channel where the CQ's events go once armed ({@link CompletionChannel#requestNotify}), or null.
     * @return a new completion queue.
     */
    CompletionQueue createCompletionQueue(int depth, CompletionChannel channel);

    /**
     * @return a new completion channel, for CQs a thread blocks on instead of polling.
     */
    CompletionChannel createCompletionChannel();

    /**
     * Allocate page-aligned memory that every provider can register with any access right (hugepages
     * when available, shared file mappings for shm), zeroed and pre-touched. It stays valid until the
     * device is closed.
     *
     * @param length bytes.
     * @return the memory.
     */
    MemorySegment allocateMemory(long length);

    /**
     * {@link QueuePair#progress()} for every QP of this device, from the calling thread.
     *
     * @return units of work done, 0 if none (always 0 on hardware).
     */
    default int progress()
    {
        return 0;
    }

    /**
     * Close the device, its CQs, PDs, QPs and regions still open, and free memory from {@link #allocateMemory}.
     */
    @Override
    void close();
}
