package io.verbus.media.rdma;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaChannelParamsTest
{
    private static Map<String, String> channel(final String... keyValues)
    {
        final Map<String, String> map = new HashMap<>();
        map.put("endpoint", "127.0.0.1:40123");
        for (int i = 0; i < keyValues.length; i += 2)
        {
            if (null == keyValues[i + 1])
            {
                map.remove(keyValues[i]);
            }
            else
            {
                map.put(keyValues[i], keyValues[i + 1]);
            }
        }
        return map;
    }

    private static void assertRejectedNaming(final String key, final String... keyValues)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> RdmaChannelParams.parse(channel(keyValues)));
        // The media's own keys are named as 'key'; the common ones (checked once by bus-core) as key=value.
        assertTrue(ex.getMessage().contains("'" + key + "'") || ex.getMessage().contains(key + "="), ex.getMessage());
    }

    @Test
    void shouldApplyAeronStyleDefaults()
    {
        final RdmaChannelParams params = RdmaChannelParams.parse(channel());
        assertEquals("127.0.0.1", params.endpointHost());
        assertEquals(40123, params.endpointPort());
        assertEquals(RdmaChannelParams.Provider.AUTO, params.provider());
        assertEquals(RdmaChannelParams.FlowControl.MIN, params.flowControl());
        assertEquals(RdmaChannelParams.TERM_DEFAULT_LENGTH, params.termLength());
        assertEquals(512 * 1024, params.windowLength(1024 * 1024));
        assertEquals(RdmaChannelParams.INLINE_DEFAULT_LENGTH, params.inlineLength());
        assertEquals(RdmaChannelParams.SIGNAL_EVERY_DEFAULT, params.signalEvery());
        assertEquals(RdmaChannelParams.HEARTBEAT_DEFAULT_INTERVAL_NS, params.heartbeatIntervalNs());
        assertEquals(RdmaChannelParams.TIMEOUT_DEFAULT_NS, params.timeoutNs());
        assertFalse(params.isGroupTagSet());
        assertEquals(CommitMode.AUTO, params.commitMode(),
            "the default: counter where the device places WRITEs in order, imm where not, or the other end's choice");
    }

    @Test
    void shouldParseEveryKey()
    {
        final RdmaChannelParams params = RdmaChannelParams.parse(channel(
            "provider", "shm", "term-length", "1m", "window", "128k", "fc", "tagged", "gtag", "7", "inline", "256",
            "signal-every", "8", "queue-depth", "256", "heartbeat", "20ms", "timeout", "2s", "mtu", "4096",
            "commit", "imm"));
        assertEquals(RdmaChannelParams.Provider.SHM, params.provider());
        assertEquals(1024 * 1024, params.termLength());
        assertEquals(128 * 1024, params.windowLength(1024 * 1024));
        assertEquals(64 * 1024, params.windowLength(128 * 1024), "window is capped at half the log's term");
        assertEquals(RdmaChannelParams.FlowControl.TAGGED, params.flowControl());
        assertEquals(7, params.groupTag());
        assertEquals(256, params.inlineLength());
        assertEquals(8, params.signalEvery());
        assertEquals(256, params.queueDepth());
        assertEquals(20_000_000L, params.heartbeatIntervalNs());
        assertEquals(2_000_000_000L, params.timeoutNs());
        assertEquals(4096, params.mtuLength());
        assertEquals(CommitMode.IMM, params.commitMode());
        assertEquals(CommitMode.AUTO, RdmaChannelParams.parse(channel("commit", "auto")).commitMode());
        assertEquals(CommitMode.COUNTER, RdmaChannelParams.parse(channel("commit", "counter")).commitMode());
    }

    @Test
    void shouldParseTheRecentCatchUpJoin()
    {
        assertFalse(RdmaChannelParams.parse(channel()).isJoinRecent(), "live by default");
        assertFalse(RdmaChannelParams.parse(channel("join", "live")).isJoinRecent());
        final RdmaChannelParams termStart = RdmaChannelParams.parse(channel("join", "recent"));
        assertTrue(termStart.isJoinRecent());
        assertEquals(-1, termStart.joinPosition(), "no join-position: the start of the live position's term");
        assertEquals(65_536,
            RdmaChannelParams.parse(channel("join", "recent", "join-position", "65536")).joinPosition());
        assertRejectedNaming("join", "join", "archive");
        assertRejectedNaming("join-position", "join-position", "0");
        assertRejectedNaming("join-position", "join", "recent", "join-position", "33");
        assertRejectedNaming("join-position", "join", "recent", "join-position", "-32");
    }

    @Test
    void shouldAcceptBracketedIpv6AndPortZero()
    {
        final RdmaChannelParams params = RdmaChannelParams.parse(channel("endpoint", "[::1]:0"));
        assertEquals("::1", params.endpointHost());
        assertEquals(0, params.endpointPort());
    }

    @Test
    void shouldPointAnAeronUserAtTheSeparatorWhenTheEndpointHoldsAeronOnes()
    {
        for (final String channel : new String[]{
            "rdma:endpoint=127.0.0.1:40200?provider=shm", "rdma:endpoint=127.0.0.1:40200&provider=shm"})
        {
            final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> RdmaChannelParams.parse(channel));
            assertTrue(ex.getMessage().contains("keys are separated by '|'"), ex.getMessage());
            assertTrue(ex.getMessage().contains("got endpoint '127.0.0.1:40200"), ex.getMessage());
        }
    }

    @Test
    void shouldRejectBadValuesNamingTheKey()
    {
        assertRejectedNaming("endpoint", "endpoint", null);
        assertRejectedNaming("endpoint", "endpoint", "localhost");
        assertRejectedNaming("endpoint port", "endpoint", "localhost:70000");
        assertRejectedNaming("endpoint port", "endpoint", "localhost:http");
        assertRejectedNaming("provider", "provider", "ib");
        assertRejectedNaming("term-length", "term-length", "100k");
        assertRejectedNaming("term-length", "term-length", "32k");
        assertRejectedNaming("term-length", "term-length", "2g");
        assertRejectedNaming("window", "window", "16");
        assertRejectedNaming("window", "term-length", "1m", "window", "1m");
        assertRejectedNaming("fc", "fc", "fastest");
        assertRejectedNaming("gtag", "gtag", "x");
        assertRejectedNaming("inline", "inline", "4k");
        assertRejectedNaming("signal-every", "signal-every", "0");
        assertRejectedNaming("signal-every", "queue-depth", "64", "signal-every", "32");
        assertRejectedNaming("queue-depth", "queue-depth", "8");
        assertRejectedNaming("heartbeat", "heartbeat", "10 parsecs");
        assertRejectedNaming("heartbeat", "heartbeat", "0ms");
        assertRejectedNaming("timeout", "timeout", "-1s");
        assertRejectedNaming("timeout", "heartbeat", "1s", "timeout", "1s");
        assertRejectedNaming("mtu", "mtu", "100");
        assertRejectedNaming("commit", "commit", "strict");
        assertRejectedNaming("nonsense", "nonsense", "1");
    }

    @Test
    void shouldExposeOnlyMediaKeysBesidesCommonOnes()
    {
        final RdmaMediaFactory factory = new RdmaMediaFactory();
        assertEquals("rdma", factory.scheme());
        assertTrue(factory.supportedKeys().contains("endpoint"));
        assertTrue(factory.supportedKeys().contains("signal-every"));
        assertFalse(factory.supportedKeys().contains("term-length"));
    }
}
