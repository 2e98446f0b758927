package io.verbus.tuning;

/**
 * Verdict of one report line.
 */
public enum Status
{
    /** The item is as a latency-sensitive host wants it. */
    OK("OK"),

    /** Works, but costs latency or predictability, or could not be verified unprivileged; the line says which. */
    WARN("WARN"),

    /** Verbus will not run as configured (e.g. RDMA memory cannot be pinned, no RDMA port is up). */
    FAIL("FAIL"),

    /** The host has no such thing (no RDMA device, no cpufreq): reported, never an error. */
    ABSENT("N/A");

    private final String label;

    Status(final String label)
    {
        this.label = label;
    }

    /**
     * @return the word printed at the start of a report line.
     */
    public String label()
    {
        return label;
    }

    /**
     * @return true when {@code tune apply} has something to fix for this line.
     */
    public boolean needsFix()
    {
        return this == WARN || this == FAIL;
    }
}
