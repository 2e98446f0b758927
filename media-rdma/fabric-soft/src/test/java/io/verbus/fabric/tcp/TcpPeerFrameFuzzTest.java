package io.verbus.fabric.tcp;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.fabric.WorkRequestOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A peer that took part in the handshake (it knows both QPNs and both PSNs, so its hello is answered) and then sends
 * whatever it likes on the connection: mutations of well-formed requests (any opcode, flags, sequence, address,
 * rkey and length, payloads that match or do not), response, NAK and ACK frames that a responder never expects, and
 * plain random bytes. Whatever it sends, the responder writes nothing outside the regions registered for it (guard
 * bytes on both sides of the remote-access region and of the receive buffer stay as they were), no thread throws
 * anything but a {@link io.verbus.fabric.FabricException} into the error handler, and afterwards the same NIC connects
 * a fresh QP pair and carries a WRITE. Seeded: a failure names its seed, {@code -Dverbus.fuzz.seed=N} replays it.
 */
class TcpPeerFrameFuzzTest
{
    private static final int ROUNDS = Integer.getInteger("verbus.fuzz.rounds", 150);
    private static final int FRAMES_PER_ROUND = 64;
    private static final long SEED = Long.getLong("verbus.fuzz.seed", System.nanoTime());
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(20);
    private static final int REGION_LENGTH = 4096;
    private static final int GUARD_LENGTH = 4096;
    private static final byte GUARD = 0x5A;
    private static final int RECEIVE_LENGTH = 1024;
    private static final int RECEIVES_PER_ROUND = 4;

    private final List<Throwable> reported = new CopyOnWriteArrayList<>();
    private final WorkRequestBatch batch = new WorkRequestBatch(1);
    private final WorkCompletion[] completions = WorkCompletion.newArray(16);
    private final Random random = new Random(SEED);
    private long nextSequence;

    private Fabric initiatorFabric;
    private Fabric responderFabric;
    private ProtectionDomain initiatorPd;
    private ProtectionDomain responderPd;
    private CompletionQueue initiatorCq;
    private CompletionQueue responderCq;
    private MemorySegment guardedRegion;
    private MemorySegment guardedReceives;
    private MemoryRegion sink;
    private MemoryRegion receives;
    private MemoryRegion source;

    @BeforeEach
    void open()
    {
        initiatorFabric = Fabrics.open("tcp", context());
        responderFabric = Fabrics.open("tcp", context());
        final Device initiator = initiatorFabric.openDevice();
        final Device responder = responderFabric.openDevice();
        initiatorPd = initiator.allocateProtectionDomain();
        responderPd = responder.allocateProtectionDomain();
        initiatorCq = initiator.createCompletionQueue(64);
        responderCq = responder.createCompletionQueue(4096);
        guardedRegion = responder.allocateMemory(GUARD_LENGTH + REGION_LENGTH + GUARD_LENGTH);
        guardedRegion.fill(GUARD);
        sink = responderPd.registerMemory(guardedRegion.asSlice(GUARD_LENGTH, REGION_LENGTH), AccessFlags.ALL);
        guardedReceives = responder.allocateMemory(GUARD_LENGTH + RECEIVE_LENGTH * RECEIVES_PER_ROUND + GUARD_LENGTH);
        guardedReceives.fill(GUARD);
        receives = responderPd.registerMemory(
            guardedReceives.asSlice(GUARD_LENGTH, (long)RECEIVE_LENGTH * RECEIVES_PER_ROUND), AccessFlags.LOCAL_WRITE);
        source = initiatorPd.registerMemory(initiator.allocateMemory(REGION_LENGTH), AccessFlags.LOCAL_WRITE);
    }

    @AfterEach
    void close()
    {
        initiatorFabric.close();
        responderFabric.close();
    }

    private FabricContext context()
    {
        return new FabricContext().tcpAddress("127.0.0.1").tcpConnectTimeoutNs(TimeUnit.SECONDS.toNanos(2))
            .errorHandler(reported::add);
    }

    @Test
    void shouldWriteOnlyInsideItsRegionsAndKeepServingWhateverAnAuthenticatedPeerSends() throws IOException
    {
        int answered = 0;
        int closedByNic = 0;
        long framesSent = 0;
        for (int round = 0; round < ROUNDS; round++)
        {
            final QueuePair requester = initiatorPd.createQueuePair(
                new QueuePairConfig().completionQueue(initiatorCq));
            final QueuePair target = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
            requester.connect(target.localConnectionInfo());
            target.connect(requester.localConnectionInfo());
            for (int i = 0; i < RECEIVES_PER_ROUND; i++)
            {
                assertEquals(PostResult.OK, target.postReceive(i, receives.address() + (long)i * RECEIVE_LENGTH,
                    RECEIVE_LENGTH, receives.lkey()), "seed " + SEED);
            }
            assertWriteLands(requester); // connected and carrying traffic before the peer turns hostile
            final InetSocketAddress port = new InetSocketAddress("127.0.0.1", target.localConnectionInfo().lid());
            try (SocketChannel peer = SocketChannel.open(port))
            {
                // The hello of the requester, which the handshake gave both QPNs and PSNs: a legitimate re-dial.
                final ByteBuffer hello = ByteBuffer.allocate(TcpWire.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
                hello.putInt(TcpWire.HELLO_MAGIC_OFFSET, TcpWire.MAGIC)
                    .putInt(TcpWire.HELLO_VERSION_OFFSET, TcpWire.VERSION)
                    .putInt(TcpWire.HELLO_TARGET_QPN_OFFSET, target.qpNumber())
                    .putInt(TcpWire.HELLO_SOURCE_QPN_OFFSET, requester.qpNumber())
                    .putInt(TcpWire.HELLO_TARGET_PSN_OFFSET, target.localConnectionInfo().psn())
                    .putInt(TcpWire.HELLO_SOURCE_PSN_OFFSET, requester.localConnectionInfo().psn());
                peer.configureBlocking(false);
                writeFully(peer, hello, target);
                if (awaitHelloAnswer(peer, target))
                {
                    answered++;
                    nextSequence = 1; // the requester's one WRITE was 0
                    for (int frame = 0; frame < FRAMES_PER_ROUND; frame++)
                    {
                        if (!writeFully(peer, nextFrame(), target) || drain(peer, target) < 0)
                        {
                            closedByNic++;
                            break;
                        }
                        framesSent++;
                    }
                }
            }
            requester.close();
            target.close();
            responderCq.poll(completions, completions.length);
            initiatorCq.poll(completions, completions.length);
        }

        assertGuardsIntact(guardedRegion, REGION_LENGTH, "the remote-access region");
        assertGuardsIntact(guardedReceives, RECEIVE_LENGTH * RECEIVES_PER_ROUND, "the receive buffers");
        for (final Throwable error : reported)
        {
            assertTrue(error instanceof io.verbus.fabric.FabricException,
                "seed " + SEED + ": a thread reported " + error);
        }
        assertTrue(answered > ROUNDS / 2, "seed " + SEED + ": only " + answered + " hellos of " + ROUNDS + " answered");
        assertWriteLandsOnAFreshPair();
        System.out.printf("tcp peer frame fuzz, seed %d: %d rounds, %d hellos answered, %,d frames taken, %d " +
            "connections closed by the NIC, %d errors reported%n", SEED, ROUNDS, answered, framesSent, closedByNic,
            reported.size());
    }

    /**
     * One frame from the peer: mostly a well-formed request in sequence (so that the responder gets deep into the
     * stream), else a mutated request, a stray response, or random bytes.
     */
    private ByteBuffer nextFrame()
    {
        final int kind = random.nextInt(20);
        if (kind < 16)
        {
            return wellFormedRequest();
        }
        if (kind < 18)
        {
            return request(nextSequence++);
        }
        if (kind < 19)
        {
            final ByteBuffer response = ByteBuffer.allocate(TcpWire.RESPONSE_HEADER_LENGTH + random.nextInt(64))
                .order(ByteOrder.LITTLE_ENDIAN);
            response.putInt(TcpWire.FRAME_LENGTH_OFFSET, random.nextBoolean() ? response.capacity() : random.nextInt())
                .put(TcpWire.FRAME_TYPE_OFFSET, (byte)(TcpWire.TYPE_RESPONSE + random.nextInt(3)))
                .put(TcpWire.RESPONSE_STATUS_OFFSET, (byte)random.nextInt(32))
                .putLong(TcpWire.RESPONSE_SEQUENCE_OFFSET, random.nextInt(8) - 2);
            return response;
        }
        final byte[] noise = new byte[1 + random.nextInt(256)];
        random.nextBytes(noise);
        return ByteBuffer.wrap(noise);
    }

    private ByteBuffer wellFormedRequest()
    {
        final WorkRequestOpcode[] opcodes = {
            WorkRequestOpcode.RDMA_WRITE, WorkRequestOpcode.RDMA_WRITE_WITH_IMM, WorkRequestOpcode.SEND,
            WorkRequestOpcode.SEND_WITH_IMM, WorkRequestOpcode.RDMA_READ, WorkRequestOpcode.ATOMIC_FETCH_AND_ADD,
            WorkRequestOpcode.ATOMIC_CMP_AND_SWP };
        final WorkRequestOpcode opcode = opcodes[random.nextInt(opcodes.length)];
        final boolean atomic = opcode.isAtomic();
        final int length = atomic ? Long.BYTES : random.nextInt(RECEIVE_LENGTH + 1);
        final long offset = atomic ? Long.BYTES * (long)random.nextInt(REGION_LENGTH / Long.BYTES) :
            random.nextInt(REGION_LENGTH - length + 1);
        final boolean carriesPayload = opcode != WorkRequestOpcode.RDMA_READ && !atomic;
        final int headerLength = atomic ? TcpWire.ATOMIC_REQUEST_HEADER_LENGTH : TcpWire.REQUEST_HEADER_LENGTH;
        final ByteBuffer frame = ByteBuffer.allocate(headerLength + (carriesPayload ? length : 0))
            .order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(TcpWire.FRAME_LENGTH_OFFSET, frame.capacity())
            .put(TcpWire.FRAME_TYPE_OFFSET, TcpWire.TYPE_REQUEST)
            .put(TcpWire.REQUEST_OPCODE_OFFSET, (byte)opcode.ordinal())
            .putShort(TcpWire.REQUEST_FLAGS_OFFSET, (short)(random.nextBoolean() ? SendFlags.SIGNALED : 0))
            .putLong(TcpWire.REQUEST_SEQUENCE_OFFSET, nextSequence++)
            .putLong(TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET, sink.address() + offset)
            .putInt(TcpWire.REQUEST_RKEY_OFFSET, sink.rkey())
            .putInt(TcpWire.REQUEST_LENGTH_OFFSET, length)
            .putInt(TcpWire.REQUEST_IMMEDIATE_OFFSET, random.nextInt())
            .putInt(TcpWire.REQUEST_RNR_BUDGET_US_OFFSET, 0);
        if (atomic)
        {
            frame.putLong(TcpWire.REQUEST_COMPARE_ADD_OFFSET, random.nextLong())
                .putLong(TcpWire.REQUEST_SWAP_OFFSET, random.nextLong());
        }
        for (int i = headerLength; i < frame.capacity(); i++)
        {
            frame.put(i, (byte)random.nextInt());
        }
        return frame;
    }

    private ByteBuffer request(final long sequence)
    {
        final WorkRequestOpcode[] opcodes = WorkRequestOpcode.values();
        final int opcode = random.nextInt(8) == 0 ? random.nextInt(256) : random.nextInt(opcodes.length);
        final boolean atomic = opcode < opcodes.length && opcodes[opcode].isAtomic();
        final int headerLength = atomic ? TcpWire.ATOMIC_REQUEST_HEADER_LENGTH : TcpWire.REQUEST_HEADER_LENGTH;
        final int length = switch (random.nextInt(6))
        {
            case 0 -> random.nextInt();
            case 1 -> -1 - random.nextInt(16);
            case 2 -> REGION_LENGTH + random.nextInt(GUARD_LENGTH);
            default -> random.nextInt(REGION_LENGTH + 1);
        };
        final long address = switch (random.nextInt(5))
        {
            case 0 -> random.nextLong();
            case 1 -> sink.address() - 1 - random.nextInt(GUARD_LENGTH);
            case 2 -> sink.address() + REGION_LENGTH - random.nextInt(64);
            default -> sink.address() + random.nextInt(REGION_LENGTH);
        };
        final int rkey = random.nextInt(6) == 0 ? random.nextInt() : sink.rkey();
        // A payload of the announced length when it is a sane one, else anything (shorter, longer, none).
        final int payload = length >= 0 && length <= 2 * REGION_LENGTH && random.nextInt(4) != 0 ? length :
            random.nextInt(512);
        final ByteBuffer frame = ByteBuffer.allocate(headerLength + payload).order(ByteOrder.LITTLE_ENDIAN);
        final int frameLength = random.nextInt(8) == 0 ? random.nextInt() : headerLength + payload;
        frame.putInt(TcpWire.FRAME_LENGTH_OFFSET, frameLength)
            .put(TcpWire.FRAME_TYPE_OFFSET, random.nextInt(16) == 0 ? (byte)random.nextInt(256) : TcpWire.TYPE_REQUEST)
            .put(TcpWire.REQUEST_OPCODE_OFFSET, (byte)opcode)
            .putShort(TcpWire.REQUEST_FLAGS_OFFSET, (short)(random.nextBoolean() ? SendFlags.SIGNALED :
                random.nextInt(1 << 16)))
            .putLong(TcpWire.REQUEST_SEQUENCE_OFFSET, random.nextInt(4) == 0 ? random.nextLong() : sequence)
            .putLong(TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET, address)
            .putInt(TcpWire.REQUEST_RKEY_OFFSET, rkey)
            .putInt(TcpWire.REQUEST_LENGTH_OFFSET, length)
            .putInt(TcpWire.REQUEST_IMMEDIATE_OFFSET, random.nextInt())
            .putInt(TcpWire.REQUEST_RNR_BUDGET_US_OFFSET, random.nextInt(3) - 1);
        if (atomic)
        {
            frame.putLong(TcpWire.REQUEST_COMPARE_ADD_OFFSET, random.nextLong())
                .putLong(TcpWire.REQUEST_SWAP_OFFSET, random.nextLong());
        }
        for (int i = headerLength; i < frame.capacity(); i++)
        {
            frame.put(i, (byte)i);
        }
        return frame;
    }

    /** @return false if the NIC closed the connection or stopped reading (its buffers full for the timeout). */
    private boolean writeFully(final SocketChannel peer, final ByteBuffer frame, final QueuePair target)
        throws IOException
    {
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (frame.hasRemaining())
        {
            try
            {
                if (0 == peer.write(frame))
                {
                    if (drain(peer, target) < 0 || System.nanoTime() > deadlineNs)
                    {
                        return false;
                    }
                    LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
                }
            }
            catch (final IOException ex)
            {
                return false; // reset by the NIC
            }
        }
        return true;
    }

    /** Let the responder run (its own thread and this one) and read what it answered; -1 once it closed. */
    private int drain(final SocketChannel peer, final QueuePair target)
    {
        target.progress();
        responderCq.poll(completions, completions.length);
        final ByteBuffer into = ByteBuffer.allocate(64 * 1024);
        int total = 0;
        try
        {
            int read;
            while ((read = peer.read(into.clear())) > 0)
            {
                total += read;
            }
            return read < 0 ? -1 : total;
        }
        catch (final IOException ex)
        {
            return -1;
        }
    }

    private boolean awaitHelloAnswer(final SocketChannel peer, final QueuePair target) throws IOException
    {
        final ByteBuffer answer = ByteBuffer.allocate(TcpWire.HELLO_LENGTH);
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (answer.hasRemaining())
        {
            target.progress();
            if (peer.read(answer) < 0)
            {
                return false;
            }
            if (System.nanoTime() > deadlineNs)
            {
                fail("seed " + SEED + ": no answer to a hello that knew all four values");
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
        }
        return true;
    }

    private static void assertGuardsIntact(final MemorySegment guarded, final int insideLength, final String what)
    {
        for (long i = 0; i < guarded.byteSize(); i++)
        {
            if (i == GUARD_LENGTH)
            {
                i += insideLength - 1;
                continue;
            }
            final byte value = guarded.get(ValueLayout.JAVA_BYTE, i);
            if (GUARD != value)
            {
                fail("seed " + SEED + ": byte " + (i - GUARD_LENGTH) + " relative to " + what + " was written (" +
                    value + ")");
            }
        }
    }

    private void assertWriteLandsOnAFreshPair()
    {
        final QueuePair requester = initiatorPd.createQueuePair(new QueuePairConfig().completionQueue(initiatorCq));
        final QueuePair target = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
        requester.connect(target.localConnectionInfo());
        target.connect(requester.localConnectionInfo());
        assertWriteLands(requester);
    }

    private void assertWriteLands(final QueuePair requester)
    {
        source.segment().fill((byte)0x33);
        batch.clear().add().write(7, source.address(), REGION_LENGTH, source.lkey(), sink.address(), sink.rkey(),
            SendFlags.SIGNALED);
        assertEquals(PostResult.OK, requester.postSend(batch));
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (0 == initiatorCq.poll(completions, 1))
        {
            assertTrue(System.nanoTime() < deadlineNs,
                "seed " + SEED + ": the WRITE after the fuzzing did not complete");
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
        }
        assertEquals(WorkCompletionStatus.SUCCESS, completions[0].status(), "seed " + SEED);
        assertEquals((byte)0x33, sink.segment().get(ValueLayout.JAVA_BYTE, REGION_LENGTH - 1));
    }
}
