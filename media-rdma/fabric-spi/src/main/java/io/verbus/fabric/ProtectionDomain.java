package io.verbus.fabric;

import java.lang.foreign.MemorySegment;

/**
 * Groups memory regions and QPs that may be used together: a QP may only use regions of its own PD.
 */
public interface ProtectionDomain extends AutoCloseable
{
    /**
     * Register memory.
     * <p>
     * The segment must be native. Providers may add constraints they cannot avoid: shm needs regions with a
     * REMOTE right to be shared file mappings (e.g. from {@link Device#allocateMemory(long)} or a file in
     * /dev/shm or hugetlbfs) so that peer processes can map them; the error says so.
     *
     * @param segment     native memory to register.
     * @param accessFlags {@link AccessFlags}; as few as the use needs.
     * @return the region.
     * @throws IllegalArgumentException if the segment or flags are unusable, naming why.
     */
    MemoryRegion registerMemory(MemorySegment segment, int accessFlags);

    /**
     * Create an RC QP.
     *
     * @param config queues, depths, inline size, port and timeouts.
     * @return the QP, in RESET.
     * @throws IllegalArgumentException if the config exceeds the device's limits, naming the field.
     */
    QueuePair createQueuePair(QueuePairConfig config);

    /**
     * Create a shared receive queue that QPs of this PD may take their receives from.
     *
     * @param depth RECVs the pool holds; at most {@link DeviceAttributes#maxQueuePairWorkRequests()}.
     * @return the SRQ.
     * @throws IllegalArgumentException if the depth is out of range.
     */
    SharedReceiveQueue createSharedReceiveQueue(int depth);

    /**
     * @return the device this PD belongs to.
     */
    Device device();

    /**
     * Free the PD; its regions and QPs must already be closed.
     */
    @Override
    void close();
}
