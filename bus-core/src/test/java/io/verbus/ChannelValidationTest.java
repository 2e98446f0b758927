package io.verbus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChannelValidationTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldParseSchemeAloneAndKeyValuePairsWithSizeSuffixes()
    {
        assertEquals("ipc", ChannelUri.parse("ipc").scheme());
        assertEquals(Map.of(), ChannelUri.parse("ipc:").params());
        final ChannelUri uri = ChannelUri.parse("ipc:term-length=1m|mtu=4096|window=64k");
        assertEquals(1024 * 1024, uri.termLength(0));
        assertEquals(4096, uri.mtu(0));
        assertEquals(64 * 1024, uri.window(1024 * 1024));
        assertEquals(512 * 1024, ChannelUri.parse("ipc").window(1024 * 1024), "window defaults to half a term");
        assertEquals(65536, ChannelUri.parse("ipc:term-length=65536").termLength(0));
        assertEquals(1 << 30, ChannelUri.parse("ipc:term-length=1G").termLength(0));
        assertEquals("10.0.0.2:40123", ChannelUri.parse("rdma:endpoint=10.0.0.2:40123|provider=shm").get("endpoint"));
        assertTrue(ChannelUri.parse("aeron:udp?endpoint=localhost:0").isAeron());
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
        "ipc:term-length=100k; power of two",
        "ipc:term-length=32k; power of two from 64k",
        "ipc:term-length=2g; power of two from 64k",
        "ipc:term-length=abc; term-length=abc",
        "ipc:term-length=-64k; not a positive size",
        "ipc:term-length=0; not a positive size",
        "ipc:mtu=1000; mtu=1000",
        "ipc:mtu=70000; mtu=70000",
        "ipc:window=1g; window=1g",
        "ipc:bogus=1; unknown key 'bogus'",
        "ipc:term-length; expected key=value",
        "ipc:term-length=; empty value for key 'term-length'",
        "ipc:mtu=1024|mtu=2048; duplicate key 'mtu'",
        "9ipc:x=1; invalid scheme '9ipc'",
        "aeron:udp?endpoint; invalid Aeron channel",
        "aeron:xyz; unknown media: xyz",
        "' '; null or blank"})
    void shouldRejectBadChannelsNamingTheProblem(final String channel, final String expected)
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final IllegalArgumentException pubEx =
                assertThrows(IllegalArgumentException.class, () -> verbus.addPublication(channel, 1));
            assertTrue(pubEx.getMessage().contains(expected), pubEx.getMessage());
            final IllegalArgumentException subEx =
                assertThrows(IllegalArgumentException.class, () -> verbus.addSubscription(channel, 1));
            assertTrue(subEx.getMessage().contains(expected), subEx.getMessage());

            // The failed adds corrupted nothing: the instance still works.
            final Subscription subscription = verbus.addSubscription("ipc", 2);
            final Publication publication = verbus.addPublication("ipc", 2);
            TestSupport.await("connected", publication::isConnected);
            assertTrue(publication.offer(new UnsafeBuffer(new byte[4]), 0, 4) > 0);
            TestSupport.await("received", () -> subscription.poll((b, o, l, h) -> {}, 1) == 1);
        }
    }

    @Test
    void shouldRejectUnknownMediaSchemeNamingItAndTheKnownOnes()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> verbus.addPublication("carrier-pigeon:endpoint=roof", 1));
            assertTrue(ex.getMessage().contains("unknown media scheme 'carrier-pigeon'"), ex.getMessage());
            assertTrue(ex.getMessage().contains("aeron") && ex.getMessage().contains("ipc"), ex.getMessage());
            assertThrows(IllegalArgumentException.class, () -> verbus.addSubscription("carrier-pigeon", 1));
        }
    }

    @Test
    void shouldValidateKeysAgainstTheMediaKeys()
    {
        final ChannelUri uri = ChannelUri.parse("rdma:endpoint=h:1|term-length=64k|colour=red");
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> uri.validateKeys(Set.of("endpoint")));
        assertTrue(ex.getMessage().contains("unknown key 'colour'"), ex.getMessage());
        assertTrue(ex.getMessage().contains("[endpoint, mtu, session-id, term-length, window]"), ex.getMessage());
        ChannelUri.parse("rdma:endpoint=h:1|term-length=64k").validateKeys(Set.of("endpoint"));
    }

    @Test
    void shouldRejectBadContextSettingsClearly()
    {
        final IllegalArgumentException termLength = assertThrows(IllegalArgumentException.class,
            () -> Verbus.launch(TestSupport.context(tempDir).termLength(3 * 65536)));
        assertTrue(termLength.getMessage().contains("must be a power of two"), termLength.getMessage());

        final IllegalArgumentException idle = assertThrows(IllegalArgumentException.class,
            () -> Verbus.launch(TestSupport.context(tempDir).idleStrategy("lazy")));
        assertTrue(idle.getMessage().contains("unknown idle strategy 'lazy'"), idle.getMessage());
        assertTrue(idle.getMessage().contains("busy-spin"), idle.getMessage());

        final IllegalArgumentException mtu = assertThrows(IllegalArgumentException.class,
            () -> Verbus.launch(TestSupport.context(tempDir).mtuLength(1000)));
        assertTrue(mtu.getMessage().contains("mtuLength 1000"), mtu.getMessage());
    }
}
