package io.verbus.bench;

/**
 * The receiving end of a one-way stream, owned by the subscriber thread.
 */
public interface StreamSubscriber
{
    /**
     * Polls once.
     *
     * @param length of each message in bytes (byte streams such as TCP count messages by it).
     * @return how many whole messages arrived.
     */
    int poll(int length);
}
