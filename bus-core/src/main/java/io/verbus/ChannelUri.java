package io.verbus;

import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import org.agrona.SystemUtil;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A parsed Verbus channel: {@code scheme:key=value|key=value}, e.g. {@code ipc:term-length=64k|window=32k} or
 * {@code rdma:endpoint=10.0.0.2:40123|provider=shm}. A scheme alone ({@code ipc}) is valid.
 * <p>
 * Channels starting with {@code aeron:} are Aeron URIs ({@code aeron:ipc}, {@code aeron:udp?endpoint=...}); they
 * are checked with Aeron's own parser and handed to the embedded Aeron driver verbatim.
 * <p>
 * Parsing checks syntax only; {@link #validateKeys(Set)} rejects keys the channel's media does not know, and the
 * typed getters reject bad values, always naming the key and the channel.
 */
public final class ChannelUri
{
    /** Scheme of Aeron URIs served by the embedded Aeron media driver. */
    public static final String AERON_SCHEME = "aeron";

    /** Scheme of Verbus's native in-process log. */
    public static final String IPC_SCHEME = "ipc";

    /**
     * Aeron's spy prefix: a subscription to {@code aeron-spy:<media channel>} reads the logs of this driver's own
     * publications on that channel in place (see {@link #matchesSpiedPublication(ChannelUri)}).
     */
    public static final String SPY_PREFIX = "aeron-spy:";

    /** Length of each of the log's three terms: a power of two from 64k to 1g; suffixes k, m, g. */
    public static final String TERM_LENGTH_KEY = "term-length";

    /** Maximum frame length including the 32-byte header: a multiple of 32 from 64 to 65504. */
    public static final String MTU_KEY = "mtu";

    /** How far a publisher may run ahead of its slowest subscriber in bytes; suffixes k, m, g. */
    public static final String WINDOW_KEY = "window";

    /**
     * Aeron's {@code session-id}: on a subscription, only the publication with this session id becomes an image
     * (a session-specific subscription); on a publication, the session id it takes (unique per stream).
     */
    public static final String SESSION_ID_KEY = "session-id";

    /** Keys every Verbus (non-Aeron) scheme accepts. */
    public static final Set<String> COMMON_KEYS = Set.of(TERM_LENGTH_KEY, MTU_KEY, WINDOW_KEY, SESSION_ID_KEY);

    /** Smallest term length accepted, 64 KiB. */
    public static final int TERM_MIN_LENGTH = 64 * 1024;

    /** Largest term length accepted, 1 GiB. */
    public static final int TERM_MAX_LENGTH = 1024 * 1024 * 1024;

    /** Smallest MTU: a header plus one aligned payload block. */
    public static final int MTU_MIN_LENGTH = DataHeaderFlyweight.HEADER_LENGTH + FrameDescriptor.FRAME_ALIGNMENT;

    /** Largest MTU, as Aeron's (the largest UDP payload rounded down to the frame alignment). */
    public static final int MTU_MAX_LENGTH = 65504;

    private final String channel;
    private final String scheme;
    private final Map<String, String> params;
    private final boolean spy;

    private ChannelUri(final String channel, final String scheme, final Map<String, String> params, final boolean spy)
    {
        this.channel = channel;
        this.scheme = scheme;
        this.params = params;
        this.spy = spy;
    }

    /**
     * Parses a channel string.
     *
     * @param channel such as {@code ipc}, {@code ipc:term-length=1m} or {@code aeron:udp?endpoint=localhost:0}.
     * @return the parsed channel.
     * @throws IllegalArgumentException naming the problem when the syntax is wrong.
     */
    public static ChannelUri parse(final String channel)
    {
        if (null == channel || channel.isBlank())
        {
            throw new IllegalArgumentException("channel must not be null or blank");
        }

        if (channel.startsWith(SPY_PREFIX))
        {
            final ChannelUri spied = parse(channel.substring(SPY_PREFIX.length()));
            if (spied.spy)
            {
                throw new IllegalArgumentException("channel '" + channel + "': " + SPY_PREFIX + " given twice");
            }
            return new ChannelUri(channel, spied.scheme, spied.params, true);
        }

        final int colon = channel.indexOf(':');
        final String scheme = colon < 0 ? channel : channel.substring(0, colon);
        if (!isValidScheme(scheme))
        {
            throw new IllegalArgumentException(
                "invalid scheme '" + scheme + "' in channel '" + channel + "': expected letters, digits, '+', '-' or" +
                " '.' starting with a letter, e.g. ipc:term-length=64k");
        }

        if (AERON_SCHEME.equals(scheme))
        {
            try
            {
                io.aeron.ChannelUri.parse(channel);
            }
            catch (final RuntimeException ex)
            {
                throw new IllegalArgumentException("invalid Aeron channel '" + channel + "': " + ex.getMessage(), ex);
            }
            return new ChannelUri(channel, scheme, Collections.emptyMap(), false);
        }

        final Map<String, String> params = new LinkedHashMap<>();
        final String rest = colon < 0 ? "" : channel.substring(colon + 1);
        if (!rest.isEmpty())
        {
            for (final String pair : rest.split("\\|", -1))
            {
                final int equals = pair.indexOf('=');
                if (equals <= 0)
                {
                    throw new IllegalArgumentException(
                        "invalid parameter '" + pair + "' in channel '" + channel + "': expected key=value");
                }
                final String key = pair.substring(0, equals);
                final String value = pair.substring(equals + 1);
                if (value.isEmpty())
                {
                    throw new IllegalArgumentException(
                        "empty value for key '" + key + "' in channel '" + channel + "'");
                }
                if (null != params.put(key, value))
                {
                    throw new IllegalArgumentException("duplicate key '" + key + "' in channel '" + channel + "'");
                }
            }
        }

        return new ChannelUri(channel, scheme, Collections.unmodifiableMap(params), false);
    }

    /** @return the scheme, e.g. {@code ipc}, {@code rdma} or {@code aeron}. */
    public String scheme()
    {
        return scheme;
    }

    /** @return true for an Aeron URI served by the embedded Aeron media driver. */
    public boolean isAeron()
    {
        return AERON_SCHEME.equals(scheme);
    }

    /** @return true for a spy ({@value #SPY_PREFIX} before the channel); {@link #scheme()} is the spied channel's. */
    public boolean isSpy()
    {
        return spy;
    }

    /**
     * Which of the driver's publications a spy reads: those of the spy's scheme whose channel has every key the spy
     * names with the same value, apart from {@link #COMMON_KEYS} (a spy's {@code session-id} picks the session, as
     * on any subscription). So {@code aeron-spy:rdma:endpoint=10.0.0.1:40123} reads the publication added as
     * {@code rdma:endpoint=10.0.0.1:40123|provider=shm|term-length=1m}, and {@code aeron-spy:rdma:provider=shm}
     * every rdma publication on shm.
     *
     * @param publication the channel a publication was added with.
     * @return true when this spy reads it.
     */
    public boolean matchesSpiedPublication(final ChannelUri publication)
    {
        if (!spy || publication.spy || !scheme.equals(publication.scheme))
        {
            return false;
        }
        for (final Map.Entry<String, String> entry : params.entrySet())
        {
            if (!COMMON_KEYS.contains(entry.getKey()) && !entry.getValue().equals(publication.get(entry.getKey())))
            {
                return false;
            }
        }
        return true;
    }

    /** @return the parameters in the order given (empty for Aeron URIs). */
    public Map<String, String> params()
    {
        return params;
    }

    /** @return the value of a key, or null when absent. */
    public String get(final String key)
    {
        return params.get(key);
    }

    /** @return the value of a key, or the default when absent. */
    public String get(final String key, final String defaultValue)
    {
        return params.getOrDefault(key, defaultValue);
    }

    /** @return true when the key is present. */
    public boolean containsKey(final String key)
    {
        return params.containsKey(key);
    }

    /**
     * Rejects any key outside {@link #COMMON_KEYS} and the given media keys.
     *
     * @param mediaKeys the keys the channel's media accepts besides the common ones.
     * @return this.
     * @throws IllegalArgumentException naming the first unknown key and listing the known ones.
     */
    public ChannelUri validateKeys(final Set<String> mediaKeys)
    {
        for (final String key : params.keySet())
        {
            if (!COMMON_KEYS.contains(key) && !mediaKeys.contains(key))
            {
                final Set<String> known = new TreeSet<>(COMMON_KEYS);
                known.addAll(mediaKeys);
                throw new IllegalArgumentException(
                    "unknown key '" + key + "' in channel '" + channel + "': " + scheme + " accepts " + known);
            }
        }
        return this;
    }

    /**
     * @return the {@code term-length} value, checked to be a power of two from 64k to 1g, or the default.
     * @throws IllegalArgumentException naming the key when the value is malformed or out of range.
     */
    public int termLength(final int defaultTermLength)
    {
        final String value = params.get(TERM_LENGTH_KEY);
        if (null == value)
        {
            return defaultTermLength;
        }
        final long termLength = parseSize(TERM_LENGTH_KEY, value, channel);
        checkTermLength(termLength, TERM_LENGTH_KEY + "=" + value + " in channel '" + channel + "'");
        return (int)termLength;
    }

    /**
     * @return the {@code mtu} value, checked to be a multiple of 32 from 64 to 65504, or the default.
     * @throws IllegalArgumentException naming the key when the value is malformed or out of range.
     */
    public int mtu(final int defaultMtu)
    {
        final String value = params.get(MTU_KEY);
        if (null == value)
        {
            return defaultMtu;
        }
        final long mtu = parseSize(MTU_KEY, value, channel);
        if (mtu < MTU_MIN_LENGTH || mtu > MTU_MAX_LENGTH || 0 != (mtu & (FrameDescriptor.FRAME_ALIGNMENT - 1)))
        {
            throw new IllegalArgumentException(
                MTU_KEY + "=" + value + " in channel '" + channel + "' must be a multiple of " +
                FrameDescriptor.FRAME_ALIGNMENT + " from " + MTU_MIN_LENGTH + " to " + MTU_MAX_LENGTH);
        }
        return (int)mtu;
    }

    /**
     * @return the {@code window} value in bytes, checked to be from 32 bytes to half the term length, or the
     * default of half the term length.
     * @throws IllegalArgumentException naming the key when the value is malformed or out of range.
     */
    public int window(final int termLength)
    {
        final String value = params.get(WINDOW_KEY);
        final int maxWindow = termLength / 2;
        if (null == value)
        {
            return maxWindow;
        }
        final long window = parseSize(WINDOW_KEY, value, channel);
        if (window < FrameDescriptor.FRAME_ALIGNMENT || window > maxWindow)
        {
            throw new IllegalArgumentException(
                WINDOW_KEY + "=" + value + " in channel '" + channel + "' must be from " +
                FrameDescriptor.FRAME_ALIGNMENT + " bytes to half the term length (" + maxWindow + ")");
        }
        return (int)window;
    }

    /** @return true when the channel names a {@code session-id}. */
    public boolean hasSessionId()
    {
        return params.containsKey(SESSION_ID_KEY);
    }

    /**
     * @return the {@code session-id} value.
     * @throws IllegalArgumentException naming the key when it is absent or not an integer.
     */
    public int sessionId()
    {
        if (!hasSessionId())
        {
            throw new IllegalArgumentException("channel '" + channel + "' has no " + SESSION_ID_KEY);
        }
        return intValue(SESSION_ID_KEY, 0);
    }

    /** @return true when the channel has no {@code session-id} or names this one. */
    public boolean matchesSession(final int sessionId)
    {
        return !hasSessionId() || sessionId() == sessionId;
    }

    /**
     * @return an integer parameter, or the default when absent.
     * @throws IllegalArgumentException naming the key when it is not an integer.
     */
    public int intValue(final String key, final int defaultValue)
    {
        final String value = params.get(key);
        if (null == value)
        {
            return defaultValue;
        }
        try
        {
            return Integer.parseInt(value);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(
                key + "=" + value + " in channel '" + channel + "' is not an integer", ex);
        }
    }

    /**
     * Parses a byte size with an optional binary suffix: {@code 65536}, {@code 64k}, {@code 16m}, {@code 1g}.
     *
     * @param key     named in the error.
     * @param value   to parse.
     * @param channel named in the error.
     * @return the size in bytes.
     * @throws IllegalArgumentException naming the key when the value is not a positive size.
     */
    public static long parseSize(final String key, final String value, final String channel)
    {
        try
        {
            final long size = SystemUtil.parseSize(key, value.trim());
            if (size <= 0)
            {
                throw new NumberFormatException("not positive");
            }
            return size;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(
                key + "=" + value + " in channel '" + channel + "' is not a positive size (e.g. 65536, 64k, 16m, 1g)",
                ex);
        }
    }

    /**
     * Checks a term length is a power of two from 64 KiB to 1 GiB.
     *
     * @param termLength to check.
     * @param source     what to name in the error, e.g. the key and channel.
     * @throws IllegalArgumentException when it is not.
     */
    public static void checkTermLength(final long termLength, final String source)
    {
        if (termLength < TERM_MIN_LENGTH || termLength > TERM_MAX_LENGTH || Long.bitCount(termLength) != 1)
        {
            throw new IllegalArgumentException(
                "term length " + termLength + " (" + source + ") must be a power of two from 64k (" +
                TERM_MIN_LENGTH + ") to 1g (" + TERM_MAX_LENGTH + ")");
        }
    }

    private static boolean isValidScheme(final String scheme)
    {
        if (scheme.isEmpty() || !Character.isLetter(scheme.charAt(0)))
        {
            return false;
        }
        for (int i = 0; i < scheme.length(); i++)
        {
            final char c = scheme.charAt(i);
            if (!(Character.isLetterOrDigit(c) || c == '+' || c == '-' || c == '.'))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @param other another parsed channel.
     * @return true when both name the same scheme and the same keys with the same values, in any order: what makes
     * two concurrent publications of one stream share a log, as Aeron's canonical form does.
     */
    public boolean isSameChannelAs(final ChannelUri other)
    {
        return scheme.equals(other.scheme) && spy == other.spy && params.equals(other.params);
    }

    /** @return the channel exactly as given. */
    public String toString()
    {
        return channel;
    }
}
