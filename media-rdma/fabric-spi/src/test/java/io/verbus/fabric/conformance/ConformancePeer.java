package io.verbus.fabric.conformance;

import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;

import java.util.List;

/**
 * The responder side of the conformance suite: a QP connected to the initiator's, with regions the
 * initiator targets. It may live in this process ({@link InProcessPeer}, e.g. a second QP on the same
 * verbs device) or in a child JVM ({@link ChildProcessPeer}, possibly in another network namespace).
 */
public interface ConformancePeer extends AutoCloseable
{
    /** A region registered by the peer, as the initiator names it. */
    record Region(int id, long address, int rkey, long length)
    {
    }

    /** A completion the peer polled from its receive CQ. */
    record Completion(
        long wrId, WorkCompletionStatus status, WorkCompletionOpcode opcode, int byteLength, int immediate,
        boolean hasImmediate)
    {
    }

    /**
     * Create the peer's QP (and its CQ) for one test.
     *
     * @return its connection info.
     */
    QueuePairConnectionInfo createQueuePair(int receiveDepth);

    /**
     * Connect the peer's QP to the initiator's (RESET to RTS).
     */
    void connect(QueuePairConnectionInfo initiator);

    /**
     * Allocate and register {@code length} bytes, zeroed.
     */
    Region register(int length, int accessFlags);

    void deregister(int regionId);

    byte[] read(int regionId, long offset, int length);

    void write(int regionId, long offset, byte[] bytes);

    /**
     * @return the post result.
     */
    int postReceive(long wrId, int regionId, long offset, int length);

    /**
     * Poll the receive CQ until {@code count} completions or the timeout.
     */
    List<Completion> pollReceive(int count, long timeoutMs);

    /**
     * @return the peer QP's state, after letting the provider make progress.
     */
    QueuePairState state();

    /**
     * Close the QP, CQ and regions of the current test.
     */
    void destroyQueuePair();

    /**
     * Die abruptly: a child process is killed (SIGKILL), an in-process peer stops answering.
     */
    void kill();

    /**
     * @return false once killed.
     */
    boolean isAlive();

    @Override
    void close();
}
