package io.verbus.fabric;

/**
 * One send-queue work request: a reusable, mutable description with one scatter/gather element, shaped
 * like {@code struct ibv_send_wr} so a provider can copy it field by field into a pre-allocated native WR.
 * <p>
 * Addresses are absolute: the local range is {@code [localAddress, localAddress + length)} inside a region
 * whose {@link MemoryRegion#lkey()} is {@code lkey} (not needed with {@link SendFlags#INLINE}); the remote
 * address is an address inside the peer's region as its {@link MemoryRegion#address()} reported it.
 * For atomics the local range is the 8 bytes that receive the old remote value.
 * <p>
 * Fill WRs through {@link WorkRequestBatch#add()} and the fluent setters; nothing here allocates.
 */
public final class WorkRequest
{
    private WorkRequestOpcode opcode = WorkRequestOpcode.RDMA_WRITE;
    private long wrId;
    private int flags;
    private long localAddress;
    private int length;
    private int lkey;
    private long remoteAddress;
    private int rkey;
    private int immediateData;
    private long compareAdd;
    private long swap;

    /**
     * Reset every field to its default.
     *
     * @return this.
     */
    public WorkRequest clear()
    {
        opcode = WorkRequestOpcode.RDMA_WRITE;
        wrId = 0;
        flags = 0;
        localAddress = 0;
        length = 0;
        lkey = 0;
        remoteAddress = 0;
        rkey = 0;
        immediateData = 0;
        compareAdd = 0;
        swap = 0;
        return this;
    }

    /**
     * Describe an RDMA WRITE.
     *
     * @return this.
     */
    public WorkRequest write(
        final long wrId,
        final long localAddress,
        final int length,
        final int lkey,
        final long remoteAddress,
        final int rkey,
        final int flags)
    {
        return opcode(WorkRequestOpcode.RDMA_WRITE).wrId(wrId).local(localAddress, length, lkey)
            .remote(remoteAddress, rkey).flags(flags);
    }

    /**
     * Describe an RDMA WRITE_WITH_IMM.
     *
     * @return this.
     */
    public WorkRequest writeWithImmediate(
        final long wrId,
        final long localAddress,
        final int length,
        final int lkey,
        final long remoteAddress,
        final int rkey,
        final int immediateData,
        final int flags)
    {
        return write(wrId, localAddress, length, lkey, remoteAddress, rkey, flags)
            .opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM).immediateData(immediateData);
    }

    /**
     * Describe an RDMA READ of {@code length} remote bytes into the local range.
     *
     * @return this.
     */
    public WorkRequest read(
        final long wrId,
        final long localAddress,
        final int length,
        final int lkey,
        final long remoteAddress,
        final int rkey,
        final int flags)
    {
        return opcode(WorkRequestOpcode.RDMA_READ).wrId(wrId).local(localAddress, length, lkey)
            .remote(remoteAddress, rkey).flags(flags);
    }

    /**
     * Describe a SEND (into the responder's next RECV).
     *
     * @return this.
     */
    public WorkRequest send(final long wrId, final long localAddress, final int length, final int lkey, final int flags)
    {
        return opcode(WorkRequestOpcode.SEND).wrId(wrId).local(localAddress, length, lkey).remote(0, 0).flags(flags);
    }

    /**
     * Describe an 8-byte fetch-and-add at {@code remoteAddress}; the old value lands at {@code resultAddress}.
     *
     * @return this.
     */
    public WorkRequest fetchAdd(
        final long wrId,
        final long resultAddress,
        final int resultLkey,
        final long remoteAddress,
        final int rkey,
        final long add,
        final int flags)
    {
        return opcode(WorkRequestOpcode.ATOMIC_FETCH_AND_ADD).wrId(wrId).local(resultAddress, Long.BYTES, resultLkey)
            .remote(remoteAddress, rkey).compareAdd(add).swap(0).flags(flags);
    }

    /**
     * Describe an 8-byte compare-and-swap at {@code remoteAddress}; the old value lands at {@code resultAddress}.
     *
     * @return this.
     */
    public WorkRequest compareSwap(
        final long wrId,
        final long resultAddress,
        final int resultLkey,
        final long remoteAddress,
        final int rkey,
        final long expected,
        final long swap,
        final int flags)
    {
        return opcode(WorkRequestOpcode.ATOMIC_CMP_AND_SWP).wrId(wrId).local(resultAddress, Long.BYTES, resultLkey)
            .remote(remoteAddress, rkey).compareAdd(expected).swap(swap).flags(flags);
    }

    public WorkRequest opcode(final WorkRequestOpcode opcode)
    {
        this.opcode = opcode;
        return this;
    }

    public WorkRequest wrId(final long wrId)
    {
        this.wrId = wrId;
        return this;
    }

    public WorkRequest flags(final int flags)
    {
        this.flags = flags;
        return this;
    }

    public WorkRequest local(final long localAddress, final int length, final int lkey)
    {
        this.localAddress = localAddress;
        this.length = length;
        this.lkey = lkey;
        return this;
    }

    public WorkRequest remote(final long remoteAddress, final int rkey)
    {
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        return this;
    }

    public WorkRequest immediateData(final int immediateData)
    {
        this.immediateData = immediateData;
        return this;
    }

    public WorkRequest compareAdd(final long compareAdd)
    {
        this.compareAdd = compareAdd;
        return this;
    }

    public WorkRequest swap(final long swap)
    {
        this.swap = swap;
        return this;
    }

    public WorkRequestOpcode opcode()
    {
        return opcode;
    }

    public long wrId()
    {
        return wrId;
    }

    public int flags()
    {
        return flags;
    }

    public boolean isSignaled()
    {
        return (flags & SendFlags.SIGNALED) != 0;
    }

    public boolean isInline()
    {
        return (flags & SendFlags.INLINE) != 0;
    }

    public long localAddress()
    {
        return localAddress;
    }

    public int length()
    {
        return length;
    }

    public int lkey()
    {
        return lkey;
    }

    public long remoteAddress()
    {
        return remoteAddress;
    }

    public int rkey()
    {
        return rkey;
    }

    public int immediateData()
    {
        return immediateData;
    }

    /**
     * @return the value to add (fetch-add) or to compare with (compare-swap).
     */
    public long compareAdd()
    {
        return compareAdd;
    }

    /**
     * @return the value swapped in by compare-swap.
     */
    public long swap()
    {
        return swap;
    }

    @Override
    public String toString()
    {
        return "WorkRequest{" + opcode + ", wrId=" + wrId + ", flags=0x" + Integer.toHexString(flags) +
            ", local=0x" + Long.toHexString(localAddress) + "/" + length + "/lkey=" + lkey +
            ", remote=0x" + Long.toHexString(remoteAddress) + "/rkey=" + rkey + '}';
    }
}
