package io.verbus.media.rdma;

import io.verbus.ChannelUri;
import org.agrona.SystemUtil;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * The validated parameters of an {@code rdma:} channel.
 * <p>
 * {@code rdma:endpoint=host:port|provider=auto|term-length=1m|window=512k|fc=min|inline=128|signal-every=16}.
 * On a publication the endpoint is the control address it listens on (bind); on a subscription it is the
 * publisher to connect to. Every key has an Aeron-style default; a bad value fails with an
 * {@link IllegalArgumentException} whose message names the key, the value and what is allowed.
 * <p>
 * Built once from the {@link ChannelUri} bus-core parsed: the common keys ({@code term-length}, {@code mtu},
 * {@code window}, {@code session-id}) come from its typed, already validated getters; only the media's own keys
 * are read here, sizes and durations with Agrona's {@link SystemUtil} parsers. The media then reads typed values
 * only and never sees the raw map.
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
     * {@code secret=required}: refuse to add this publication or subscription unless a shared secret is configured
     * (the channel's twin of {@code -Dverbus.rdma.secret.required=true}); {@code secret=optional} (the default)
     * leaves the choice to that property.
     */
    public static final String SECRET_KEY = "secret";
    /**
     * Aeron's {@code session-id}: on a subscription, connect only to a publication with that session id (the
     * handshake refuses any other before registering anything); on a publication, the session id it takes (set by
     * Verbus, not the media).
     */
    public static final String SESSION_ID_KEY = "session-id";
    /**
     * {@code commit=counter|imm|auto}: how the publisher tells the image that data has landed ({@link CommitMode});
     * both ends must agree (the handshake refuses two different explicit modes).
     */
    public static final String COMMIT_KEY = "commit";
    /**
     * On a subscription, {@code join=recent}: catch up by RDMA READ of what the publisher's log still holds, from
     * {@code join-position} (default: the start of the live position's term), then continue live with no gap and no
     * duplicate; {@code join=live} (the default) starts at the live position. ({@code join=archive} is the archive
     * module's and never reaches the media.)
     */
    public static final String JOIN_KEY = "join";
    /** With {@code join=recent}: the stream position (a frame boundary, a multiple of 32) to catch up from. */
    public static final String JOIN_POSITION_KEY = "join-position";
    /**
     * On a subscription, {@code idle=event}: its images can block the polling thread until the next immediate
     * completion ({@code Subscription.awaitData}, used by {@code io.verbus.EventIdleStrategy}); needs
     * {@code commit=imm} (implied when {@code commit} is absent). {@code idle=poll} (the default): no completion
     * channel.
     */
    public static final String IDLE_KEY = "idle";

    /** Every key an {@code rdma:} channel accepts; the media factory hands this set to the URI validator. */
    public static final Set<String> SUPPORTED_KEYS = Set.of(
        ENDPOINT_KEY, PROVIDER_KEY, TERM_LENGTH_KEY, MTU_KEY, WINDOW_KEY, FLOW_CONTROL_KEY, GROUP_TAG_KEY,
        INLINE_KEY, SIGNAL_EVERY_KEY, QUEUE_DEPTH_KEY, HEARTBEAT_KEY, TIMEOUT_KEY, SECRET_FILE_KEY, SECRET_KEY,
        SESSION_ID_KEY, COMMIT_KEY, JOIN_KEY, JOIN_POSITION_KEY, IDLE_KEY);

    /** The keys only this media reads: {@link #SUPPORTED_KEYS} less bus-core's {@link ChannelUri#COMMON_KEYS}. */
    public static final Set<String> MEDIA_KEYS = mediaKeys();

    public static final int TERM_DEFAULT_LENGTH = 1024 * 1024;
    public static final int MTU_DEFAULT_LENGTH = 1408;
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
    private final boolean secretRequired;
    private final boolean sessionIdSet;
    private final int sessionId;
    private final CommitMode commitMode;
    private final boolean joinRecent;
    private final long joinPosition;
    private final boolean idleEvent;

    private RdmaChannelParams(final ChannelUri uri)
    {
        uri.validateKeys(MEDIA_KEYS);
        final String endpoint = uri.get(ENDPOINT_KEY);
        if (null == endpoint || endpoint.isBlank())
        {
            throw new IllegalArgumentException("rdma channel: 'endpoint' is required (endpoint=host:port)");
        }
        if (endpoint.indexOf('?') >= 0 || endpoint.indexOf('&') >= 0)
        {
            // Aeron's URI separators, the usual slip of an Aeron user: say so rather than fail on the port.
            throw new IllegalArgumentException("rdma channel: keys are separated by '|' after 'rdma:' " +
                "(rdma:endpoint=host:port|provider=shm), not by '?' or '&' as in aeron:udp; got endpoint '" +
                endpoint + "'");
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

        provider = parseEnum(PROVIDER_KEY, uri.get(PROVIDER_KEY), Provider.AUTO, Provider.values());

        // The common keys, typed and validated once by bus-core.
        termLengthSet = uri.containsKey(TERM_LENGTH_KEY);
        termLength = uri.termLength(TERM_DEFAULT_LENGTH);
        mtuLength = uri.mtu(MTU_DEFAULT_LENGTH);
        windowSet = uri.containsKey(WINDOW_KEY);
        windowLength = uri.window(termLength);
        sessionIdSet = uri.hasSessionId();
        sessionId = sessionIdSet ? uri.sessionId() : 0;

        flowControl = parseEnum(FLOW_CONTROL_KEY, uri.get(FLOW_CONTROL_KEY), FlowControl.MIN, FlowControl.values());
        groupTagSet = uri.containsKey(GROUP_TAG_KEY);
        groupTag = groupTagSet ? parseLongIn(GROUP_TAG_KEY, uri.get(GROUP_TAG_KEY), Long.MIN_VALUE, Long.MAX_VALUE) : 0;

        inlineLength = uri.containsKey(INLINE_KEY) ?
            (int)parseLength(INLINE_KEY, uri.get(INLINE_KEY), 0, INLINE_MAX_LENGTH) : INLINE_DEFAULT_LENGTH;
        queueDepth = uri.containsKey(QUEUE_DEPTH_KEY) ?
            (int)parseLongIn(QUEUE_DEPTH_KEY, uri.get(QUEUE_DEPTH_KEY), QUEUE_DEPTH_MIN, QUEUE_DEPTH_MAX) :
            QUEUE_DEPTH_DEFAULT;
        // Each batch posts two WRs; an unsignaled run must be reaped before the send queue fills.
        signalEvery = uri.containsKey(SIGNAL_EVERY_KEY) ?
            (int)parseLongIn(SIGNAL_EVERY_KEY, uri.get(SIGNAL_EVERY_KEY), 1, queueDepth / 4) :
            Math.min(SIGNAL_EVERY_DEFAULT, queueDepth / 4);

        heartbeatIntervalNs = uri.containsKey(HEARTBEAT_KEY) ?
            parseDurationNs(HEARTBEAT_KEY, uri.get(HEARTBEAT_KEY), HEARTBEAT_MIN_INTERVAL_NS,
            HEARTBEAT_MAX_INTERVAL_NS) : HEARTBEAT_DEFAULT_INTERVAL_NS;
        timeoutNs = uri.containsKey(TIMEOUT_KEY) ?
            parseDurationNs(TIMEOUT_KEY, uri.get(TIMEOUT_KEY), 1, TIMEOUT_MAX_NS) : TIMEOUT_DEFAULT_NS;
        if (timeoutNs < 2 * heartbeatIntervalNs)
        {
            throw new IllegalArgumentException(
                "rdma channel: 'timeout' (" + timeoutNs + " ns) must be at least twice " +
                "'heartbeat' (" + heartbeatIntervalNs + " ns), or a live peer would time out");
        }

        secretFile = uri.get(SECRET_FILE_KEY);
        if (null != secretFile && secretFile.isBlank())
        {
            throw new IllegalArgumentException("rdma channel: 'secret-file' must name a file");
        }
        final String secret = uri.get(SECRET_KEY);
        if (null != secret && !"required".equals(secret.trim()) && !"optional".equals(secret.trim()))
        {
            throw new IllegalArgumentException("rdma channel: 'secret' must be one of required|optional, got '" +
                secret + "'");
        }
        secretRequired = null != secret && "required".equals(secret.trim());
        idleEvent = parseIdleEvent(uri.get(IDLE_KEY));
        commitMode = idleEvent ? commitForIdleEvent(uri.get(COMMIT_KEY)) :
            parseEnum(COMMIT_KEY, uri.get(COMMIT_KEY), CommitMode.AUTO, CommitMode.values());

        final String join = uri.get(JOIN_KEY);
        if (null != join && !"recent".equals(join.trim()) && !"live".equals(join.trim()))
        {
            throw new IllegalArgumentException("rdma channel: 'join' must be one of live|recent, got '" + join +
                "' (join=archive needs the archive module's LateJoinSubscription)");
        }
        joinRecent = null != join && "recent".equals(join.trim());
        if (uri.containsKey(JOIN_POSITION_KEY))
        {
            if (!joinRecent)
            {
                throw new IllegalArgumentException("rdma channel: 'join-position' needs join=recent");
            }
            joinPosition = parseLongIn(JOIN_POSITION_KEY, uri.get(JOIN_POSITION_KEY), 0, Long.MAX_VALUE);
            if (0 != (joinPosition & 31))
            {
                throw new IllegalArgumentException("rdma channel: 'join-position' must be a frame boundary " +
                    "(a multiple of 32), got " + joinPosition);
            }
        }
        else
        {
            joinPosition = -1;
        }
    }

    /** @return true for {@code join=recent}: catch up by RDMA READ of the publisher's log before going live. */
    public boolean isJoinRecent()
    {
        return joinRecent;
    }

    /** @return the {@code join-position}, or -1 for the start of the live position's term. */
    public long joinPosition()
    {
        return joinPosition;
    }

    /**
     * The rdma parameters of a channel bus-core has parsed.
     *
     * @param uri the channel.
     * @return the validated parameters.
     * @throws IllegalArgumentException naming the offending key.
     */
    public static RdmaChannelParams from(final ChannelUri uri)
    {
        return new RdmaChannelParams(uri);
    }

    /**
     * Parse and validate a whole {@code rdma:} channel string.
     *
     * @param channel such as {@code rdma:endpoint=127.0.0.1:40123|provider=shm}.
     * @return the validated parameters.
     * @throws IllegalArgumentException naming the offending key.
     */
    public static RdmaChannelParams parse(final String channel)
    {
        return from(ChannelUri.parse(channel));
    }

    /**
     * Parse and validate the key/value pairs of an {@code rdma:} channel (tests and tools that hold a map).
     *
     * @param params the channel's keys and values.
     * @return the validated parameters.
     * @throws IllegalArgumentException naming the offending key.
     */
    public static RdmaChannelParams parse(final Map<String, String> params)
    {
        final StringBuilder channel = new StringBuilder(RdmaMediaFactory.SCHEME).append(':');
        for (final Map.Entry<String, String> entry : params.entrySet())
        {
            channel.append(channel.length() > RdmaMediaFactory.SCHEME.length() + 1 ? "|" : "")
                .append(entry.getKey()).append('=').append(entry.getValue());
        }
        return parse(channel.toString());
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

    /** @return the channel's {@code commit} mode as configured ({@code auto} is resolved per connection). */
    public CommitMode commitMode()
    {
        return commitMode;
    }

    /** @return true for {@code idle=event}: the subscription's images can block until the next immediate. */
    public boolean isIdleEvent()
    {
        return idleEvent;
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

    /** True with {@code secret=required}: no secret configured fails the add instead of using the development one. */
    public boolean secretRequired()
    {
        return secretRequired;
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
        return parseIn(key, value, (text) -> SystemUtil.parseSize(key, text), "a length like 64k, 1m or 4096", min,
            max, " bytes");
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
        return parseIn(key, value, (text) -> SystemUtil.parseDuration(key, text.toLowerCase(Locale.ROOT)),
            "a duration like 100ms or 5s", minNs, maxNs, " ns");
    }

    private static long parseLongIn(final String key, final String value, final long min, final long max)
    {
        return parseIn(key, value, Long::parseLong, "an integer", min, max, "");
    }

    /**
     * The one way every number of a channel is read: {@code parser} over the trimmed text (a missing value reads as
     * empty), then the range; each failure names the key, what it must be and the text as given.
     *
     * @param what what a well-formed value is, e.g. {@code "an integer"}.
     * @param unit appended to the range in the error, e.g. {@code " bytes"}, or empty.
     */
    private static long parseIn(
        final String key,
        final String value,
        final ToLongFunction<String> parser,
        final String what,
        final long min,
        final long max,
        final String unit)
    {
        final long number;
        try
        {
            number = parser.applyAsLong(null == value ? "" : value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(
                "rdma channel: '" + key + "' must be " + what + ", got '" + value + "'", ex);
        }
        if (number < min || number > max)
        {
            throw new IllegalArgumentException("rdma channel: '" + key + "' must be in [" + min + ", " + max + "]" +
                unit + ", got '" + value + "'");
        }
        return number;
    }

    private static boolean parseIdleEvent(final String value)
    {
        if (null == value || "poll".equals(value.trim()))
        {
            return false;
        }
        if ("event".equals(value.trim()))
        {
            return true;
        }
        throw new IllegalArgumentException("rdma channel: 'idle' must be one of poll|event, got '" + value + "'");
    }

    /**
     * idle=event waits for the receive completion of a WRITE_WITH_IMM: only commit=imm has one. Counter mode's
     * position is a plain WRITE that completes nowhere on the subscriber, and auto may settle on counter.
     */
    private static CommitMode commitForIdleEvent(final String value)
    {
        final CommitMode mode = parseEnum(COMMIT_KEY, value, CommitMode.IMM, CommitMode.values());
        if (CommitMode.IMM != mode)
        {
            throw new IllegalArgumentException("rdma channel: 'idle=event' needs commit=imm (the wake-up is the " +
                "receive completion of the publisher's WRITE_WITH_IMM; commit=" + mode.keyValue() + " has " +
                (CommitMode.COUNTER == mode ? "no completion on the subscriber to wait for" :
                "no promise of imm on every device") + "), got commit=" + value.trim() +
                "; leave commit out or set commit=imm");
        }
        return mode;
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

    private static Set<String> mediaKeys()
    {
        final Set<String> keys = new java.util.HashSet<>(SUPPORTED_KEYS);
        keys.removeAll(ChannelUri.COMMON_KEYS);
        return Set.copyOf(keys);
    }

    public String toString()
    {
        return "RdmaChannelParams{endpoint=" + endpointHost + ":" + endpointPort + ", provider=" + provider +
            ", termLength=" + termLength + ", window=" + windowLength + ", fc=" + flowControl +
            (groupTagSet ? ", gtag=" + groupTag : "") + ", inline=" + inlineLength + ", signalEvery=" + signalEvery +
            ", queueDepth=" + queueDepth + ", heartbeatNs=" + heartbeatIntervalNs + ", timeoutNs=" + timeoutNs +
            ", commit=" + commitMode.keyValue() + (idleEvent ? ", idle=event" : "") + "}";
    }
}
