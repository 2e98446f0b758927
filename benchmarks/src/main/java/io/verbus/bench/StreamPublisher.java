package io.verbus.bench;

/**
 * The sending end of a one-way stream, owned by the publisher thread.
 */
public interface StreamPublisher
{
    /**
     * @param length of the message in bytes.
     * @return true when sent, false when back-pressured (retry).
     */
    boolean send(int length);

    /**
     * Work the publisher thread owes the stream after its last send, while the subscriber catches up: a stream
     * whose driver runs in invoker mode on this thread is only flushed if its duty cycle keeps running.
     *
     * @return the amount of work done, 0 when idle.
     */
    default int flush()
    {
        return 0;
    }
}
