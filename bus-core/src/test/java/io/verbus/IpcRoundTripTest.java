package io.verbus;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.Header;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static io.verbus.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IpcRoundTripTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldDeliverOfferedAndClaimedMessagesInOrderOverNativeIpc()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final List<Image> available = new ArrayList<>();
            final Subscription sub = verbus.addSubscription("ipc", 7, available::add, image -> {});
            final ExclusivePublication pub = verbus.addExclusivePublication("ipc:term-length=64k", 7);

            assertEquals(1, available.size());
            assertEquals(pub.sessionId(), available.get(0).sessionId());
            await("connected", pub::isConnected);

            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
            final BufferClaim claim = new BufferClaim();
            final int messages = 5000;
            final List<Integer> received = new ArrayList<>();
            int sent = 0;
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (received.size() < messages && System.nanoTime() < deadline)
            {
                if (sent < messages)
                {
                    final long result;
                    if (0 == (sent & 1))
                    {
                        buffer.putInt(0, sent);
                        result = pub.offer(buffer, 0, 4);
                    }
                    else
                    {
                        result = pub.tryClaim(4, claim);
                        if (result > 0)
                        {
                            claim.buffer().putInt(claim.offset(), sent);
                            claim.commit();
                        }
                    }
                    if (result > 0)
                    {
                        sent++;
                    }
                }
                sub.poll((b, o, l, h) -> received.add(b.getInt(o)), 100);
            }

            assertEquals(messages, received.size());
            for (int i = 0; i < messages; i++)
            {
                assertEquals(i, received.get(i));
            }
            assertEquals(pub.position(), sub.imageBySessionId(pub.sessionId()).position());
        }
    }

    @Test
    void shouldReassembleFragmentedMessagesAndHonourControlledPollActions()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription sub = verbus.addSubscription("ipc", 8);
            final Publication pub = verbus.addPublication("ipc:mtu=1408", 8);
            await("connected", pub::isConnected);

            final int length = pub.maxPayloadLength() * 3 + 17;
            final UnsafeBuffer message = new UnsafeBuffer(new byte[length]);
            for (int i = 0; i < length; i++)
            {
                message.putByte(i, (byte)i);
            }
            final long[] result = {0};
            await("offered", () -> (result[0] = pub.offer(message, 0, length)) > 0);

            final AtomicInteger aborts = new AtomicInteger();
            final List<Integer> fragmentLengths = new ArrayList<>();
            final ControlledFragmentHandler abortOnce = (b, o, l, h) ->
            {
                if (aborts.getAndIncrement() == 0)
                {
                    return ControlledFragmentHandler.Action.ABORT;
                }
                fragmentLengths.add(l);
                return ControlledFragmentHandler.Action.CONTINUE;
            };
            final Image image = sub.images().get(0);
            assertEquals(0, image.controlledPoll(abortOnce, 10));
            assertEquals(0, image.position(), "an aborted fragment must not be consumed");
            assertEquals(4, image.controlledPoll(abortOnce, 10));
            assertEquals(List.of(1376, 1376, 1376, 17), fragmentLengths);
            assertEquals(result[0], image.position());

            final Publication pub2 = verbus.addPublication("ipc", 8);
            final Subscription sub2 = verbus.addSubscription("ipc", 8);
            await("connected", pub2::isConnected);
            final byte[][] assembled = new byte[1][];
            final FragmentAssembler assembler = new FragmentAssembler((DirectBuffer b, int o, int l, Header h) ->
            {
                assembled[0] = new byte[l];
                b.getBytes(o, assembled[0]);
            });
            await("offered", () -> pub2.offer(message, 0, length) > 0);
            await("assembled", () -> null != assembled[0], () -> sub2.poll(assembler, 10));
            assertEquals(length, assembled[0].length);
            for (int i = 0; i < length; i++)
            {
                assertEquals((byte)i, assembled[0][i]);
            }
        }
    }

    @Test
    void shouldReturnNotConnectedWithoutSubscriberAndClosedAfterClose()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Publication pub = verbus.addPublication("ipc", 9);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
            assertFalse(pub.isConnected());
            assertEquals(Publication.NOT_CONNECTED, pub.offer(buffer, 0, 8));
            pub.close();
            assertTrue(pub.isClosed());
            assertEquals(Publication.CLOSED, pub.offer(buffer, 0, 8));
            assertEquals(Publication.CLOSED, pub.tryClaim(8, new BufferClaim()));
        }
    }
}
