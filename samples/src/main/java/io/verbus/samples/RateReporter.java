package io.verbus.samples;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Counts messages and bytes on the hot thread (two plain adds, no allocation) and prints the rates once per
 * interval from its own thread.
 */
public final class RateReporter implements Runnable, AutoCloseable
{
    private final long intervalNs;
    private final String name;
    private final AtomicLong totalMessages = new AtomicLong();
    private final AtomicLong totalBytes = new AtomicLong();
    private volatile boolean running = true;
    private final Thread thread;

    /**
     * Starts reporting.
     *
     * @param name       printed on each line.
     * @param intervalNs between lines.
     */
    public RateReporter(final String name, final long intervalNs)
    {
        this.name = name;
        this.intervalNs = intervalNs;
        this.thread = Thread.ofPlatform().daemon().name("rate-reporter").start(this);
    }

    /**
     * Counts one message; called by the one thread that sends or receives.
     *
     * @param length of the message in bytes.
     */
    public void onMessage(final long length)
    {
        totalMessages.lazySet(totalMessages.get() + 1);
        totalBytes.lazySet(totalBytes.get() + length);
    }

    /** @return messages counted so far. */
    public long totalMessages()
    {
        return totalMessages.get();
    }

    public void run()
    {
        long lastMessages = 0;
        long lastBytes = 0;
        long lastNs = System.nanoTime();
        while (running)
        {
            LockSupport.parkNanos(intervalNs);
            final long nowNs = System.nanoTime();
            final long messages = totalMessages.get();
            final long bytes = totalBytes.get();
            final double seconds = (nowNs - lastNs) / (double)TimeUnit.SECONDS.toNanos(1);
            System.out.printf("%s: %,.0f msgs/s, %,.2f MB/s, totals %,d messages %,d MB%n", name,
                (messages - lastMessages) / seconds, (bytes - lastBytes) / seconds / (1024 * 1024), messages,
                bytes / (1024 * 1024));
            lastMessages = messages;
            lastBytes = bytes;
            lastNs = nowNs;
        }
    }

    /** Stops reporting. */
    public void close()
    {
        running = false;
        LockSupport.unpark(thread);
    }
}
