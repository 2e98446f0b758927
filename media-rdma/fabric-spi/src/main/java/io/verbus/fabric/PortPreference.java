package io.verbus.fabric;

import java.util.Comparator;

/**
 * The one rule for which RDMA port Verbus uses, shared by the verbs provider (which opens it) and the host report
 * of {@code ./verbus tune} (which names it), so the two can never disagree.
 * <ol>
 *   <li>only ACTIVE ports whose link can carry Verbus: InfiniBand, or Ethernet with a RoCE v2 GID;</li>
 *   <li>hardware before software devices (Soft-RoCE {@code rxe}, Soft-iWARP {@code siw}): a software device runs
 *       in the kernel's network stack and is a testbed, never a production choice when hardware is there;</li>
 *   <li>InfiniBand before RoCE v2 (lossless, LID-routed, lowest latency);</li>
 *   <li>the larger active MTU;</li>
 *   <li>then device name and port number, so the choice is stable.</li>
 * </ol>
 */
public final class PortPreference
{
    /**
     * What the rule looks at of one port.
     *
     * @param deviceName     e.g. {@code mlx5_0}, {@code rxe0}.
     * @param software       a software device ({@link #isSoftwareDevice(String)}, or what sysfs says of it).
     * @param portNumber     1-based.
     * @param active         the port state is ACTIVE.
     * @param infiniBand     the link layer is InfiniBand.
     * @param roceV2         the link layer is Ethernet and the port has a usable RoCE v2 GID.
     * @param activeMtuBytes the active MTU in bytes, 0 when unknown.
     */
    public record Candidate(
        String deviceName,
        boolean software,
        int portNumber,
        boolean active,
        boolean infiniBand,
        boolean roceV2,
        int activeMtuBytes)
    {
        /** @return true when the rule may choose this port at all. */
        public boolean isUsable()
        {
            return active && (infiniBand || roceV2);
        }
    }

    /** Orders usable candidates best first. */
    public static final Comparator<Candidate> BEST_FIRST = Comparator
        .comparingInt((Candidate candidate) -> candidate.software() ? 1 : 0)
        .thenComparingInt(candidate -> candidate.infiniBand() ? 0 : 1)
        .thenComparing(Comparator.comparingInt(Candidate::activeMtuBytes).reversed())
        .thenComparing(Candidate::deviceName)
        .thenComparingInt(Candidate::portNumber);

    /** The rule in words, for log lines and reports. */
    public static final String DESCRIPTION =
        "hardware before software (rxe, siw), InfiniBand before RoCE v2, then the largest MTU";

    private PortPreference()
    {
    }

    /**
     * @param deviceName an RDMA device name.
     * @return true for the kernel's software devices: Soft-RoCE ({@code rxe*}) and Soft-iWARP ({@code siw*}).
     */
    public static boolean isSoftwareDevice(final String deviceName)
    {
        return deviceName.startsWith("rxe") || deviceName.startsWith("siw");
    }
}
