package io.verbus.soak;

import java.util.ArrayList;
import java.util.List;

/**
 * What the publisher process sends and the subscriber processes check, one stream per lane:
 * <pre>
 *   lane 0  ExclusivePublication (direct mode)  1 writer   offer     SMALL       the message count
 *   lane 1  ExclusivePublication (direct mode)  1 writer   tryClaim  MIXED       every 13th claim aborted first
 *   lane 2  Publication (concurrent)           2 writers  offer     FRAGMENTED  and tryClaim MIXED
 * </pre>
 */
final class SoakLanes
{
    static final int LANES = 3;
    /** Every this many claims one is aborted before the real one (padding the subscribers must skip). */
    static final int ABORT_EVERY = 13;

    /** How a writer sends. */
    enum Send
    {
        OFFER, CLAIM
    }

    /** One writer thread: its lane, its index in the lane, how it sends and its sizes. */
    record Writer(int lane, int thread, Send send, SoakMessages.Sizes sizes)
    {
        int source()
        {
            return SoakMessages.source(lane, thread);
        }
    }

    static final List<Writer> WRITERS = List.of(
        new Writer(0, 0, Send.OFFER, SoakMessages.Sizes.SMALL),
        new Writer(1, 0, Send.CLAIM, SoakMessages.Sizes.MIXED),
        new Writer(2, 0, Send.OFFER, SoakMessages.Sizes.FRAGMENTED),
        new Writer(2, 1, Send.CLAIM, SoakMessages.Sizes.MIXED));

    private SoakLanes()
    {
    }

    static boolean exclusive(final int lane)
    {
        return lane < 2;
    }

    static SoakMessages.Sizes[] sizesOf(final int lane)
    {
        final List<SoakMessages.Sizes> sizes = new ArrayList<>();
        for (final Writer writer : WRITERS)
        {
            if (writer.lane() == lane)
            {
                sizes.add(writer.sizes());
            }
        }
        return sizes.toArray(new SoakMessages.Sizes[0]);
    }
}
