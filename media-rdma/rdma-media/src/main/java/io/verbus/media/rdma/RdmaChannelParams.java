package io.verbus.media.rdma;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The validated parameters of an {@code rdma:} channel.
 * <p>
 * {@code rdma:endpoint=host:port|provider=auto|term-length=1m|window=512k|fc=min|inline=128|signal-every=16}.
 * On a publication the endpoint is the control address it listens on (bind); on a subscription it is the
 * publisher to connect to. Every key has an Aeron-style default; a bad value fails with an
 * {@link IllegalArgumentException} whose message names the key, the value and what is allowed.
 */
public final class RdmaChannelParams
{
    public static final String ENDPOINT_KEY = "endpoint";
    public static final String PROVIDER_KEY = "provider";
    public static final String TERM_LENGTH_KEY = "term-length";
    public static final String MTU_KEY = "mtu";
    public static final String WINDOW_KEY = "window";
    public static final String FLOW_CONTROL_KEY = "fc";
    public static final String GROUP_TAG_KEY = "gtag";
    public static final String INLINE_KEY = "inline";
    public static final String SIGNAL_EVERY_KEY = "signal-every";
    public static final String QUEUE_DEPTH_KEY = "queue-depth";
    public static final String HEARTBEAT_KEY = "heartbeat";
    public static final String TIMEOUT_KEY = "timeout";
    public static final String SECRET_FILE_KEY = "secret-file";
    /**
     * Aeron's {@code session-id}: on a subscription, connect only to a publication with that session id (the
     * handshake refuses any other before registering anything); on a publication, the session id it takes (set by
     * Verbus, not the media).
     */
    public static final String SESSION_ID_KEY = "session-id";

    /** Every key an {@code rdma:} channel accepts; the media factory hands this set to the URI validator. */
    public static final Set<String> SUPPORTED_KEYS = Set.of(
        ENDPOINT_KEY, PROVIDER_KEY, TERM_LENGTH_KEY, MTU_KEY, WINDOW_KEY, FLOW_CONTROL_KEY, GROUP_TAG_KEY,
        INLINE_KEY, SIGNAL_EVERY_KEY, QUEUE_DEPTH_KEY, HEARTBEAT_KEY, TIMEOUT_KEY, SECRET_FILE_KEY, SESSION_ID_KEY);

    public static final int TERM_MIN_LENGTH = 64 * 1024;
    public static final int TERM_MAX_LENGTH = 1024 * 1024 * 1024;
    public static final int TERM_DEFAULT_LENGTH = 1024 * 1024;
    public static final int MTU_DEFAULT_LENGTH = 1408;
    public static final int MTU_MIN_LENGTH = 64;
    public static final int MTU_MAX_LENGTH = 65504;
    public static final int WINDOW_MIN_LENGTH = 32;
    /** Inline requests are capped by the device; this default asks for the common ConnectX figure. */
    public static final int INLINE_DEFAULT_LENGTH = 128;
    public static final int INLINE_MAX_LENGTH = 1024;
    public static final int SIGNAL_EVERY_DEFAULT = 16;
    public static final int QUEUE_DEPTH_DEFAULT = 512;
    public static final int QUEUE_DEPTH_MIN = 16;
    public static final int QUEUE_DEPTH_MAX = 16384;
    public static final long HEARTBEAT_DEFAULT_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(100);
    public static final long HEARTBEAT_MIN_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);
    public static final long HEARTBEAT_MAX_INTERVAL_NS = TimeUnit.SECONDS.toNanos(60);
    public static final long TIMEOUT_DEFAULT_NS = TimeUnit.SECONDS.toNanos(5);
    public static final long TIMEOUT_MAX_NS = TimeUnit.HOURS.toNanos(1);

    /** Which fabric provider carries the WRITEs. */
    public enum Provider
    {
        AUTO, SHM, TCP, VERBS
    }

    /** How the publisher limit follows the subscribers' consumed positions. */
    public enum FlowControl
    {
        /** The slowest admitted subscriber sets the pace (the default, lossless for everyone). */
        MIN,
        /** The fastest subscriber sets the pace; a subscriber about to be overrun is disconnected. */
        MAX,
        /** The slowest subscriber carrying the publication's group tag sets the pace; others as in MAX. */
        TAGGED
    }

    private final String endpointHost;
    private final int endpointPort;
    private final Provider provider;
    private final int termLength;
    private final boolean termLengthSet;
    private final int mtuLength;
    private final int windowLength;
    private final boolean windowSet;
    private final FlowControl flowControl;
    private final long groupTag;
    private final boolean groupTagSet;
    private final int inlineLength;
    private final int signalEvery;
    private final int queueDepth;
    private final long heartbeatIntervalNs;
    private final long timeoutNs;
    private final String secretFile;
    private final boolean sessionIdSet;
    private final int sessionId;

    private RdmaChannelParams(final Map<String, String> params)
    {
        for (final String key : params.keySet())
        {
            if (!SUPPORTED_KEYS.contains(key))
            {
                throw new IllegalArgumentException(
                    "rdma channel: unknown key '" + key + "' (supported: " + String.join(", ", sortedKeys()) + ")");
            }
        }

        final String endpoint = params.get(ENDPOINT_KEY);
        if (null == endpoint || endpoint.isBlank())
        {
            throw new IllegalArgumentException("rdma channel: 'endpoint' is required (endpoint=host:port)");
        }
        final int colon = endpoint.lastIndexOf(':');
        if (colon <= 0 || colon == endpoint.length() - 1)
        {
            throw new IllegalArgumentException(
                "rdma channel: 'endpoint' must be host:port, got '" + endpoint + "'");
        }
        String host = endpoint.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]"))
        {
            host = host.substring(1, host.length() - 1);
        }
        endpointHost = host;
        endpointPort = (int)parseLongIn(ENDPOINT_KEY + " port", endpoint.substring(colon + 1), 0, 65535);

        provider = parseEnum(PROVIDER_KEY, params.get(PROVIDER_KEY), Provider.AUTO, Provider.values());

        termLengthSet = params.containsKey(TERM_LENGTH_KEY);
        termLength = termLengthSet ? parseTermLength(params.get(TERM_LENGTH_KEY)) : TERM_DEFAULT_LENGTH;

        mtuLength = params.containsKey(MTU_KEY) ?
            (int)parseLength(MTU_KEY, params.get(MTU_KEY), MTU_MIN_LENGTH, MTU_MAX_LENGTH) : MTU_DEFAULT_LENGTH;
        if (0 != (mtuLength & 31))
        {
            throw new IllegalArgumentException("rdma channel: 'mtu' must be a multiple of 32, got " + mtuLength);
        }

        windowSet = params.containsKey(WINDOW_KEY);
        final int maxWindow = termLength / 2;
        windowLength = windowSet ?
            (int)parseLength(WINDOW_KEY, params.get(WINDOW_KEY), WINDOW_MIN_LENGTH, maxWindow) : maxWindow;

        flowControl = parseEnum(FLOW_CONTROL_KEY, params.get(FLOW_CONTROL_KEY), FlowControl.MIN, FlowControl.values());
        groupTagSet = params.containsKey(GROUP_TAG_KEY);
        groupTag = groupTagSet ?
            parseLongIn(GROUP_TAG_KEY, params.get(GROUP_TAG_KEY), Long.MIN_VALUE, Long.MAX_VALUE) : 0;

        inlineLength = params.containsKey(INLINE_KEY) ?
            (int)parseLength(INLINE_KEY, params.get(INLINE_KEY), 0, INLINE_MAX_LENGTH) : INLINE_DEFAULT_LENGTH;
        queueDepth = params.containsKey(QUEUE_DEPTH_KEY) ?
            (int)parseLongIn(QUEUE_DEPTH_KEY, params.get(QUEUE_DEPTH_KEY), QUEUE_DEPTH_MIN, QUEUE_DEPTH_MAX) :
            QUEUE_DEPTH_DEFAULT;
        // Each batch posts two WRs; an unsignaled run must be reaped before the send queue fills.
        signalEvery = params.containsKey(SIGNAL_EVERY_KEY) ?
            (int)parseLongIn(SIGNAL_EVERY_KEY, params.get(SIGNAL_EVERY_KEY), 1, queueDepth / 4) :
            Math.min(SIGNAL_EVERY_DEFAULT, queueDepth / 4);

        heartbeatIntervalNs = params.containsKey(HEARTBEAT_KEY) ?
            parseDurationNs(HEARTBEAT_KEY, params.get(HEARTBEAT_KEY), HEARTBEAT_MIN_INTERVAL_NS,
            HEARTBEAT_MAX_INTERVAL_NS) : HEARTBEAT_DEFAULT_INTERVAL_NS;
        timeoutNs = params.containsKey(TIMEOUT_KEY) ?
            parseDurationNs(TIMEOUT_KEY, params.get(TIMEOUT_KEY), 1, TIMEOUT_MAX_NS) : TIMEOUT_DEFAULT_NS;
        if (timeoutNs < 2 * heartbeatIntervalNs)
        {
            throw new IllegalArgumentException("rdma channel: 'timeout' (" + timeoutNs + " ns) must be at least twice " +
                "'heartbeat' (" + heartbeatIntervalNs + " ns), or a live peer would time out");
        }

        secretFile = params.get(SECRET_FILE_KEY);
        if (null != secretFile && secretFile.isBlank())
        {
            throw new IllegalArgumentException("rdma channel: 'secret-file' must name a file");
        }

        sessionIdSet = params.containsKey(SESSION_ID_KEY);
        sessionId = sessionIdSet ?
            (int)parseLongIn(SESSION_ID_KEY, params.get(SESSION_ID_KEY), Integer.MIN_VALUE, Integer.MAX_VALUE) : 0;
    }

    /**
     * Parse and validate the key/value pairs of an {@code rdma:} channel.
     *
     * @param params the channel's keys and values (the URI already split).
     * @return the validated parameters.
     * @throws IllegalArgumentException naming the offending key.
     */
    public static RdmaChannelParams parse(final Map<String, String> params)
    {
        return new RdmaChannelParams(params);
    }

    public String endpointHost()
    {
        return endpointHost;
    }

    public int endpointPort()
    {
        return endpointPort;
    }

    public Provider provider()
    {
        return provider;
    }

    /** The term length: the publication's log layout, or on a subscription only a hint (the handshake wins). */
    public int termLength()
    {
        return termLength;
    }

    public boolean isTermLengthSet()
    {
        return termLengthSet;
    }

    public int mtuLength()
    {
        return mtuLength;
    }

    /**
     * The flow-control window for a log of the given term length: the channel's value, at most half a term
     * (as Aeron's publication window), so the remote ring and the local log can never be lapped.
     */
    public int windowLength(final int logTermLength)
    {
        return windowSet ? Math.min(windowLength, logTermLength / 2) : logTermLength / 2;
    }

    public FlowControl flowControl()
    {
        return flowControl;
    }

    public long groupTag()
    {
        return groupTag;
    }

    public boolean isGroupTagSet()
    {
        return groupTagSet;
    }

    /** The largest data WRITE to send inline (before capping by the device); 0 sends nothing inline. */
    public int inlineLength()
    {
        return inlineLength;
    }

    public int signalEvery()
    {
        return signalEvery;
    }

    public int queueDepth()
    {
        return queueDepth;
    }

    /** @return true when the channel names a {@code session-id}. */
    public boolean isSessionIdSet()
    {
        return sessionIdSet;
    }

    /** @return the {@code session-id} a subscription insists on (valid when {@link #isSessionIdSet()}). */
    public int sessionId()
    {
        return sessionId;
    }

    public long heartbeatIntervalNs()
    {
        return heartbeatIntervalNs;
    }

    public long timeoutNs()
    {
        return timeoutNs;
    }

    /** The file holding the shared secret, or null to use the system property / environment. */
    public String secretFile()
    {
        return secretFile;
    }

    /**
     * Parse a length with an optional k/m/g suffix (binary multiples).
     *
     * @param key   the key, named in the error.
     * @param value the text.
     * @param min   smallest allowed value.
     * @param max   largest allowed value.
     * @return the length in bytes.
     */
    public static long parseLength(final String key, final String value, final long min, final long max)
    {
        if (null == value || value.isEmpty())
        {
            throw new IllegalArgumentException("rdma channel: '" + key + "' needs a value");
        }
        final String text = value.trim().toLowerCase(Locale.ROOT);
        long multiplier = 1;
        String digits = text;
        final char last = text.charAt(text.length() - 1);
        if ('k' == last || 'm' == last || 'g' == last)
        {
            multiplier = 'k' == last ? 1024L : 'm' == last ? 1024L * 1024 : 1024L * 1024 * 1024;
            digits = text.substring(0, text.length() - 1);
        }
        final long number;
        try
        {
            number = Long.parseLong(digits);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(
                "rdma channel: '" + key + "' must be a length like 64k, 1m or 4096, got '" + value + "'", ex);
        }
        if (number < 0 || number > Long.MAX_VALUE / multiplier)
        {
            throw new IllegalArgumentException("rdma channel: '" + key + "' out of range, got '" + value + "'");
        }
        final long length = number * multiplier;
        if (length < min || length > max)
        {
            throw new IllegalArgumentException("rdma channel: '" + key + "' must be in [" + min + ", " + max +
                "] bytes, got '" + value + "'");
        }
        return length;
    }

    static int parseTermLength(final String value)
    {
        final int length = (int)parseLength(TERM_LENGTH_KEY, value, TERM_MIN_LENGTH, TERM_MAX_LENGTH);
        if (Integer.bitCount(length) != 1)
        {
            throw new IllegalArgumentException(
                "rdma channel: 'term-length' must be a power of two, got '" + value + "'");
        }
        return length;
    }

    /**
     * Parse a duration such as 100ms, 5s, 250us or 1000ns (a bare number is nanoseconds).
     *
     * @param key   the key, named in the error.
     * @param value the text.
     * @param minNs smallest allowed value.
     * @param maxNs largest allowed value.
     * @return the duration in nanoseconds.
     */
    public static long parseDurationNs(final String key, final String value, final long minNs, final long maxNs)
    {
        if (null == value || value.isEmpty())
        {
            throw new IllegalArgumentException("rdma channel: '" + key + "' needs a value");
        }
        final String text = value.trim().toLowerCase(Locale.ROOT);
        int split = text.length();
        while (split > 0 && !Character.isDigit(text.charAt(split - 1)))
        {
            split--;
        }
        final String unit = text.substring(split);
        final long scaleNs = switch (unit)
        {
            case "", "ns" -> 1L;
            case "us" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            default -> throw new IllegalArgumentException("rdma channel: '" + key +
                "' has unknown unit '" + unit + "' (use ns, us, ms or s), got '" + value + "'");
        };
        final long number;
        try
        {
            number = Long.parseLong(text.substring(0, split));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(
                "rdma channel: '" + key + "' must be a duration like 100ms or 5s, got '" + value + "'", ex);
        }
        if (number < 0 || number > Long.MAX_VALUE / scaleNs || number * scaleNs < minNs || number * scaleNs > maxNs)
        {
            throw new IllegalArgumentException("rdma channel: '" + key + "' must be in [" + minNs + ", " + maxNs +
                "] ns, got '" + value + "'");
        }
        return number * scaleNs;
    }

    private static long parseLongIn(final String key, final String value, final long min, final long max)
    {
        final long number;
        try
        {
            number = Long.parseLong(null == value ? "" : value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(
                "rdma channel: '" + key + "' must be an integer, got '" + value + "'", ex);
        }
        if (number < min || number > max)
        {
            throw new IllegalArgumentException(
                "rdma channel: '" + key + "' must be in [" + min + ", " + max + "], got '" + value + "'");
        }
        return number;
    }

    private static <E extends Enum<E>> E parseEnum(
        final String key, final String value, final E defaultValue, final E[] values)
    {
        if (null == value)
        {
            return defaultValue;
        }
        for (final E e : values)
        {
            if (e.name().equalsIgnoreCase(value.trim()))
            {
                return e;
            }
        }
        final StringBuilder allowed = new StringBuilder();
        for (final E e : values)
        {
            allowed.append(allowed.isEmpty() ? "" : "|").append(e.name().toLowerCase(Locale.ROOT));
        }
        throw new IllegalArgumentException(
            "rdma channel: '" + key + "' must be one of " + allowed + ", got '" + value + "'");
    }

    private static String[] sortedKeys()
    {
        final String[] keys = SUPPORTED_KEYS.toArray(new String[0]);
        java.util.Arrays.sort(keys);
        return keys;
    }

    public String toString()
    {
        return "RdmaChannelParams{endpoint=" + endpointHost + ":" + endpointPort + ", provider=" + provider +
            ", termLength=" + termLength + ", window=" + windowLength + ", fc=" + flowControl +
            (groupTagSet ? ", gtag=" + groupTag : "") + ", inline=" + inlineLength + ", signalEvery=" + signalEvery +
            ", queueDepth=" + queueDepth + ", heartbeatNs=" + heartbeatIntervalNs + ", timeoutNs=" + timeoutNs + "}";
    }
}
