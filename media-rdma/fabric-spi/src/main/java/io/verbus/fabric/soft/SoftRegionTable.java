package io.verbus.fabric.soft;

import io.verbus.fabric.FabricException;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The key table of a soft device: hands out memory-region keys and finds a region by key in O(1) without
 * allocating. A key is {@code generation << 16 | index}; the generation changes each time an index is
 * reused, so a stale key of a deregistered region never matches its successor.
 */
public final class SoftRegionTable
{
    /** Most regions one soft device holds. */
    public static final int MAX_REGIONS = 1 << 14;
    private static final int INDEX_BITS = 16;
    private static final int INDEX_MASK = (1 << INDEX_BITS) - 1;

    private final AtomicReferenceArray<SoftMemoryRegion> regions = new AtomicReferenceArray<>(MAX_REGIONS);
    private final int[] generations = new int[MAX_REGIONS];
    private final boolean[] reserved = new boolean[MAX_REGIONS];
    private final int keySalt;

    /**
     * @param keySalt mixed into generations so that keys of different devices rarely coincide.
     */
    public SoftRegionTable(final int keySalt)
    {
        this.keySalt = keySalt & 0x7FFF;
    }

    /**
     * Reserve a key; control path.
     *
     * @return the key.
     * @throws FabricException if the table is full.
     */
    public synchronized int reserveKey()
    {
        for (int i = 0; i < MAX_REGIONS; i++)
        {
            if (null == regions.get(i) && !reserved[i])
            {
                reserved[i] = true;
                final int generation = ((generations[i] + 1 + keySalt) & 0x7FFF) | 1;
                generations[i] = generation;
                return generation << INDEX_BITS | i;
            }
        }
        throw new FabricException("soft device region table full: " + MAX_REGIONS + " regions registered");
    }

    /**
     * Publish a region under the key it was built with.
     *
     * @param region the region.
     */
    public synchronized void publish(final SoftMemoryRegion region)
    {
        final int index = region.lkey() & INDEX_MASK;
        reserved[index] = false;
        regions.set(index, region);
    }

    /**
     * Give back a key reserved but never published (registration failed).
     *
     * @param key the key.
     */
    public synchronized void unreserve(final int key)
    {
        reserved[key & INDEX_MASK] = false;
    }

    /**
     * @param key an lkey or rkey.
     * @return the registered region with exactly that key, or null.
     */
    public SoftMemoryRegion lookup(final int key)
    {
        final int index = key & INDEX_MASK;
        if (index >= MAX_REGIONS)
        {
            return null;
        }
        final SoftMemoryRegion region = regions.get(index);
        return null != region && region.lkey() == key && region.isRegistered() ? region : null;
    }

    void release(final SoftMemoryRegion region)
    {
        regions.compareAndSet(region.lkey() & INDEX_MASK, region, null);
    }

    /**
     * Deregister every region still published; used when the device closes.
     */
    public void releaseAll()
    {
        for (int i = 0; i < MAX_REGIONS; i++)
        {
            final SoftMemoryRegion region = regions.get(i);
            if (null != region)
            {
                region.deregister();
            }
        }
    }
}
