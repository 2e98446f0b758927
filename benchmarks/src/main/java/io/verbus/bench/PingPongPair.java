package io.verbus.bench;

/**
 * Both ends of one contender's round-trip path, connected and ready. {@link #close()} may be called from another
 * thread to unblock an end that is stuck, so a hung contender never hangs the run.
 */
public interface PingPongPair extends AutoCloseable
{
    Pinger pinger();

    Ponger ponger();

    @Override
    void close();
}
