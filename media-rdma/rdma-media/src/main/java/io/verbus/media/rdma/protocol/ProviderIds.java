package io.verbus.media.rdma.protocol;

/**
 * The fabric provider ids a CHALLENGE carries, and their names, so that every message about a provider names it
 * ({@code shm}, {@code tcp}, {@code verbs}) rather than giving a number.
 */
public final class ProviderIds
{
    /** Peers on one host over mapped files. */
    public static final int SHM = 1;

    /** The software NIC over TCP. */
    public static final int TCP = 2;

    /** libibverbs: InfiniBand and RoCE hardware (or Soft-RoCE). */
    public static final int VERBS = 3;

    /** The highest id a peer may send. */
    public static final int MAX = VERBS;

    private ProviderIds()
    {
    }

    /**
     * @param providerId as carried on the wire.
     * @return the provider's name, or {@code "unknown provider N"} for an id outside 1..{@link #MAX}.
     */
    public static String name(final int providerId)
    {
        return switch (providerId)
        {
            case SHM -> "shm";
            case TCP -> "tcp";
            case VERBS -> "verbs";
            default -> "unknown provider " + providerId;
        };
    }

    /**
     * @param providerName {@code shm}, {@code tcp} or {@code verbs}.
     * @return its id.
     * @throws IllegalArgumentException for any other name.
     */
    public static int id(final String providerName)
    {
        return switch (providerName)
        {
            case "shm" -> SHM;
            case "tcp" -> TCP;
            case "verbs" -> VERBS;
            default -> throw new IllegalArgumentException("unknown fabric provider '" + providerName + "'");
        };
    }
}
