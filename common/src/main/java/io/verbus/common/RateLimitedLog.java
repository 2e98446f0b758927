package io.verbus.common;

import java.util.concurrent.TimeUnit;

/**
 * Logs one kind of event at most once per interval and says how many were left out, so that a peer (or a full
 * disk) that makes the same thing fail thousands of times a second costs a line every few seconds, not a log storm.
 * Every event is still counted by the caller; the suppressed count in the next line keeps the log and the counters
 * in agreement. Control paths only: it takes a lock and formats strings. Shared by the rdma media (handshake
 * rejections) and the tcp fabric provider (refused hellos).
 */
public final class RateLimitedLog
{
    /** Default interval between two lines of the same kind. */
    public static final long DEFAULT_INTERVAL_NS = TimeUnit.SECONDS.toNanos(5);

    private final System.Logger logger;
    private final long intervalNs;
    private long lastLoggedNs;
    private boolean loggedOnce;
    private long suppressed;

    public RateLimitedLog(final System.Logger logger, final long intervalNs)
    {
        this.logger = logger;
        this.intervalNs = intervalNs;
    }

    /**
     * @return true when the line was written, false when it was only counted as suppressed.
     */
    public synchronized boolean log(final System.Logger.Level level, final String message)
    {
        final long nowNs = System.nanoTime();
        if (loggedOnce && nowNs - lastLoggedNs < intervalNs)
        {
            suppressed++;
            return false;
        }
        final long left = suppressed;
        suppressed = 0;
        loggedOnce = true;
        lastLoggedNs = nowNs;
        logger.log(level, 0 == left ? message : message + " (and " + left + " more like it since the previous line)");
        return true;
    }

    /** @return events counted but not logged since the last line. */
    public synchronized long suppressed()
    {
        return suppressed;
    }

    /**
     * Logs, if any event was left out since the last line, one line saying how many, so that after a flush every
     * event is in the log (for a close, or a test that compares the log with a counter).
     */
    public synchronized void flush(final System.Logger.Level level, final String what)
    {
        if (suppressed > 0)
        {
            logger.log(level, what + ": " + suppressed + " more like the previous line not logged");
            suppressed = 0;
        }
    }

    /**
     * One {@link RateLimitedLog} per kind of event (e.g. per rejection reason), so that a flood of one kind does not
     * hide the first line of another.
     */
    public static final class ByKind
    {
        private final System.Logger logger;
        private final long intervalNs;
        private final java.util.concurrent.ConcurrentHashMap<String, RateLimitedLog> logs =
            new java.util.concurrent.ConcurrentHashMap<>();

        public ByKind(final System.Logger logger, final long intervalNs)
        {
            this.logger = logger;
            this.intervalNs = intervalNs;
        }

        public boolean log(final String kind, final System.Logger.Level level, final String message)
        {
            return logs.computeIfAbsent(kind, (k) -> new RateLimitedLog(logger, intervalNs)).log(level, message);
        }

        public void flush(final System.Logger.Level level, final String what)
        {
            logs.forEach((kind, log) -> log.flush(level, what + " (" + kind + ")"));
        }
    }
}
