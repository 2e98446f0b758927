package io.verbus.fabric;

import java.lang.foreign.MemorySegment;

/**
 * Memory registered with a device: local WRs name it by {@link #lkey()}, peers by {@link #rkey()} and
 * {@link #address()}.
 * <p>
 * Registration is slow: register large, long-lived buffers once at start-up. The memory must stay valid
 * until {@link #deregister()}; afterwards a peer presenting the rkey gets REM_ACCESS_ERR.
 */
public interface MemoryRegion extends AutoCloseable
{
    /**
     * @return the registered memory.
     */
    MemorySegment segment();

    /**
     * @return absolute start address, the base for local and remote addresses in WRs.
     */
    long address();

    /**
     * @return length in bytes.
     */
    long length();

    /**
     * @return the key local WRs present.
     */
    int lkey();

    /**
     * @return the key peers present.
     */
    int rkey();

    /**
     * @return the {@link AccessFlags} granted.
     */
    int accessFlags();

    /**
     * @return true until {@link #deregister()}.
     */
    boolean isRegistered();

    /**
     * Revoke the keys; idempotent.
     */
    void deregister();

    @Override
    default void close()
    {
        deregister();
    }
}
