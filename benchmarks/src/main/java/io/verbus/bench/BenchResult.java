package io.verbus.bench;

import org.HdrHistogram.Histogram;

import java.util.Objects;

/**
 * One line of the report: a contender at one message size in one part of the run.
 *
 * @param part       {@code latency}, {@code throughput}, or a seed comparison part.
 * @param contender  the contender's name.
 * @param provider   what carries the bytes.
 * @param sizeBytes  message length.
 * @param status     whether it ran.
 * @param reason     why it did not run or failed; null when it ran.
 * @param histogram  round-trip times in nanoseconds, for latency parts; else null.
 * @param messages   messages (latency: round trips) measured.
 * @param elapsedNs  wall time of the measured phase.
 * @param cpuNs      process CPU time used during the measured phase, or -1 when not measured.
 */
public record BenchResult(
    String part,
    String contender,
    String provider,
    int sizeBytes,
    Status status,
    String reason,
    Histogram histogram,
    long messages,
    long elapsedNs,
    long cpuNs)
{
    public static final String LATENCY = "latency";
    public static final String THROUGHPUT = "throughput";
    public static final String BURST = "burst";

    /** Percentiles reported everywhere, in this order. */
    public static final double[] PERCENTILES = { 50.0, 90.0, 99.0, 99.9 };

    /** Whether a contender ran. */
    public enum Status
    {
        OK("ok"), NOT_RUN("not run"), FAILED("failed");

        private final String label;

        Status(final String label)
        {
            this.label = label;
        }

        public String label()
        {
            return label;
        }
    }

    public BenchResult
    {
        Objects.requireNonNull(part, "part");
        Objects.requireNonNull(contender, "contender");
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(status, "status");
        if (Status.OK != status && null == reason)
        {
            throw new IllegalArgumentException("a result that did not run needs a reason");
        }
    }

    public static BenchResult notRun(
        final String part, final String contender, final String provider, final int sizeBytes, final String reason)
    {
        return new BenchResult(part, contender, provider, sizeBytes, Status.NOT_RUN, reason, null, 0, 0, -1);
    }

    public static BenchResult failed(
        final String part, final String contender, final String provider, final int sizeBytes, final String reason)
    {
        return new BenchResult(part, contender, provider, sizeBytes, Status.FAILED, reason, null, 0, 0, -1);
    }

    public boolean ok()
    {
        return Status.OK == status;
    }

    public boolean hasHistogram()
    {
        return ok() && null != histogram && histogram.getTotalCount() > 0;
    }

    /**
     * @param percentile in 0..100.
     * @return the round-trip time at that percentile in nanoseconds.
     */
    public long valueAtPercentileNs(final double percentile)
    {
        return histogram.getValueAtPercentile(percentile);
    }

    public long maxNs()
    {
        return histogram.getMaxValue();
    }

    public double messagesPerSecond()
    {
        return elapsedNs > 0 ? messages * 1e9 / elapsedNs : 0.0;
    }

    /** @return payload megabytes (10^6 bytes) per second. */
    public double megabytesPerSecond()
    {
        return messagesPerSecond() * sizeBytes / 1e6;
    }

    /** @return process CPU nanoseconds per message, or -1 when not measured. */
    public double cpuNsPerMessage()
    {
        return cpuNs >= 0 && messages > 0 ? (double)cpuNs / messages : -1;
    }

    /** @return "ok", or "not run: reason" / "failed: reason". */
    public String statusText()
    {
        return Status.OK == status ? status.label() : status.label() + ": " + reason;
    }
}
