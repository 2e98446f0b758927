package io.verbus.bench;

/**
 * One way of moving a message from one thread to another that the harness measures side by side with the others.
 * A contender that cannot run on this machine says why through {@link #unavailableReason()} and is then listed as
 * "not run: reason", never left out and never given numbers.
 */
public interface Contender
{
    /**
     * @return short unique name, e.g. {@code aeron-ipc}.
     */
    String name();

    /**
     * @return what carries the bytes, always named: e.g. {@code aeron 1.51.0 MediaDriver, invoker}.
     */
    String provider();

    /**
     * @return null when this contender can run here, else the reason it cannot.
     */
    default String unavailableReason()
    {
        return null;
    }

    /**
     * @return true when the contender runs threads of its own on the data path (a software NIC) which need CPU
     * time while the measuring threads wait: those then yield instead of busy-spinning, so that on two cores the
     * helper threads are not starved.
     */
    default boolean runsHelperThreads()
    {
        return false;
    }

    /**
     * @return why the burst-tail part cannot measure this contender's stream, or null when it can.
     */
    default String burstTailUnavailableReason()
    {
        return null;
    }

    /**
     * @param maxLength the largest message the pair must carry.
     * @return a connected round-trip pair.
     * @throws Exception when it cannot be set up; the run records the failure and goes on.
     */
    PingPongPair openPingPong(int maxLength) throws Exception;

    /**
     * @param maxLength the largest message the stream must carry.
     * @return a connected one-way stream.
     * @throws Exception when it cannot be set up; the run records the failure and goes on.
     */
    StreamPair openStream(int maxLength) throws Exception;
}
