package io.verbus.media.rdma;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.media.rdma.protocol.SlotLayout;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The receive credits of commit=imm, against a scripted receive CQ and a QP that counts RECVs: the RECVs of reaped
 * immediates are posted again on the next call (after the application handled the frames, off the path from the
 * immediate to it), and the position the status may report stops at the last immediate whose RECV is posted again, so
 * the publisher never gets a credit the responder does not hold.
 */
class ImmediateBoundTest
{
    private static final int TERM_LENGTH = 64 * 1024;
    private static final long JOIN_POSITION = 4096;

    /** What the scripted CQ holds, in order: an immediate, or {@link #FLUSHED}. */
    private static final long FLUSHED = Long.MIN_VALUE;

    private final ArrayDeque<Long> arrived = new ArrayDeque<>();
    private final AtomicInteger receivesPosted = new AtomicInteger();
    private final ImmediateBound bound = new ImmediateBound(
        scriptedCompletionQueue(), null, countingQueuePair(), 0, 0,
        new PositionBlockBound(new UnsafeBuffer(new byte[SlotLayout.BLOCK_LENGTH]), TERM_LENGTH, JOIN_POSITION),
        TERM_LENGTH, JOIN_POSITION);

    @Test
    void shouldPostTheReceivesOfWhatItReapedOnTheNextCallAndCreditOnlyThen()
    {
        assertEquals(JOIN_POSITION, bound.creditedPosition());

        arrive(JOIN_POSITION + 64);
        arrive(JOIN_POSITION + 128);
        assertEquals(JOIN_POSITION + 128, bound.acquire(JOIN_POSITION));
        assertEquals(0, receivesPosted.get(), "no RECV on the path to the frames");
        assertEquals(JOIN_POSITION, bound.creditedPosition(), "nothing credited before its RECV is back");

        assertEquals(JOIN_POSITION + 128, bound.acquire(JOIN_POSITION + 128)); // the CQ is empty now
        assertEquals(2, receivesPosted.get());
        assertEquals(JOIN_POSITION + 128, bound.creditedPosition());

        arrive(JOIN_POSITION + 192);
        assertEquals(JOIN_POSITION + 192, bound.acquire(JOIN_POSITION + 128));
        assertEquals(2, receivesPosted.get());
        assertEquals(JOIN_POSITION + 128, bound.creditedPosition());
        arrive(JOIN_POSITION + 256);
        assertEquals(JOIN_POSITION + 256, bound.acquire(JOIN_POSITION + 192));
        assertEquals(3, receivesPosted.get(), "the call that reaps the next immediate posts the last one's RECV");
        assertEquals(JOIN_POSITION + 192, bound.creditedPosition());
        assertEquals(JOIN_POSITION + 256, bound.acquire(JOIN_POSITION + 256));
        assertEquals(4, receivesPosted.get());
        assertEquals(JOIN_POSITION + 256, bound.creditedPosition());
        assertEquals(4, bound.immediates());
    }

    @Test
    void shouldNeitherPostNorCreditAFailedReceive()
    {
        arrive(JOIN_POSITION + 64);
        arrived.add(FLUSHED); // a RECV flushed by a QP error
        assertEquals(JOIN_POSITION + 64, bound.acquire(JOIN_POSITION));
        assertEquals(JOIN_POSITION + 64, bound.acquire(JOIN_POSITION + 64));
        assertEquals(1, receivesPosted.get());
        assertEquals(JOIN_POSITION + 64, bound.creditedPosition());
    }

    private void arrive(final long position)
    {
        arrived.add((long)ImmediateCommit.immediateOf(position));
    }

    private CompletionQueue scriptedCompletionQueue()
    {
        return new CompletionQueue()
        {
            public int poll(final WorkCompletion[] completions, final int max)
            {
                int count = 0;
                while (count < max && !arrived.isEmpty())
                {
                    final long immediate = arrived.poll();
                    final boolean flushed = FLUSHED == immediate;
                    completions[count++].set(0, flushed ? WorkCompletionStatus.WR_FLUSH_ERR :
                        WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RECV_RDMA_WITH_IMM, 0,
                        flushed ? 0 : (int)immediate, !flushed, 1, 0);
                }
                return count;
            }

            public int depth()
            {
                return 64;
            }

            public void close()
            {
            }
        };
    }

    private QueuePair countingQueuePair()
    {
        return (QueuePair)Proxy.newProxyInstance(QueuePair.class.getClassLoader(), new Class<?>[] { QueuePair.class },
            (proxy, method, args) ->
            {
                if ("postReceive".equals(method.getName()))
                {
                    receivesPosted.incrementAndGet();
                    return PostResult.OK;
                }
                throw new UnsupportedOperationException(method.getName());
            });
    }
}
