package io.verbus.gateway;

import io.verbus.gateway.GatewayConfig.Part;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GatewayConfigTest
{
    @Test
    void shouldDefaultToSeparateProcessesOverRdmaShmWithOneSpinningThreadPerProcessWhereTheHostHasTheCpus()
    {
        final GatewayConfig config = GatewayConfig.parse();
        assertTrue(config.launchesProcesses());
        assertEquals(GatewayConfig.Transport.RDMA, config.transport());
        assertEquals("rdma:endpoint=0.0.0.0:20501|provider=shm",
            config.channel(GatewayConfig.MARKET_DATA_STREAM_ID, true));
        assertTrue(config.isIdleChosenForTheHost());
        assertFalse(config.dedicatedThreads());
        if (GatewayConfig.AUTO_SPIN_ENABLED &&
            Runtime.getRuntime().availableProcessors() >= GatewayConfig.AUTO_SPIN_MIN_CPUS)
        {
            assertEquals("busy-spin", config.idleStrategy());
            assertTrue(config.driverInvoked(), "the driver runs on the parts' thread: no second spinner");
            assertEquals(2, config.spinningThreads(), "one per process");
        }
        else
        {
            assertEquals("backoff", config.idleStrategy());
            assertFalse(config.driverInvoked());
            assertEquals(0, config.spinningThreads());
        }
        assertTrue(config.durationNs() < TimeUnit.MINUTES.toNanos(1), "the demo ends within a minute");
    }

    @Test
    void shouldKeepBackoffAndADriverThreadWhenAskedFor()
    {
        final GatewayConfig config = GatewayConfig.parse("--idle", "backoff");
        assertFalse(config.isIdleChosenForTheHost());
        assertEquals("backoff", config.idleStrategy());
        assertFalse(config.driverInvoked());
        assertEquals(0, config.spinningThreads());
    }

    @Test
    void shouldRunAllPartsInThisProcessOverIpcWhenLaunchIsSingle()
    {
        final GatewayConfig config = GatewayConfig.parse("--launch", "single");
        assertFalse(config.launchesProcesses());
        assertTrue(config.runs(Part.FEED) && config.runs(Part.STRATEGY) && config.runs(Part.ORDERS));
        assertEquals("ipc", config.channel(GatewayConfig.MARKET_DATA_STREAM_ID, true));
        assertEquals("aeron:ipc", GatewayConfig.parse("--launch", "single", "--transport", "aeron-ipc")
            .channel(GatewayConfig.ORDER_STREAM_ID, false));
    }

    @Test
    void shouldAcceptBothFlagFormsAndUnits()
    {
        final GatewayConfig config = GatewayConfig.parse("--duration=2m", "--warmup", "500ms", "--rate", "50k",
            "--instruments=16", "--busy-spin", "--out", "/tmp/x");
        assertEquals(TimeUnit.MINUTES.toNanos(2), config.durationNs());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(500), config.warmupNs());
        assertEquals(50_000, config.ratePerSecond());
        assertEquals(16, config.instruments());
        assertEquals("busy-spin", config.idleStrategy());
        assertEquals(2, config.spinningThreads(), "one parts thread in each of the two processes; drivers invoked");
        assertTrue(config.driverInvoked());
        assertEquals(1, GatewayConfig.parse("--busy-spin", "--launch", "single").spinningThreads());
    }

    @Test
    void shouldBuildRdmaChannelsWhereThePublisherListensAndTheSubscriberConnects()
    {
        final GatewayConfig config = GatewayConfig.parse("--transport", "rdma", "--provider", "tcp",
            "--md-endpoint", "10.0.0.1:41000");
        assertEquals("rdma:endpoint=0.0.0.0:41000|provider=tcp",
            config.channel(GatewayConfig.MARKET_DATA_STREAM_ID, true));
        assertEquals("rdma:endpoint=10.0.0.1:41000|provider=tcp",
            config.channel(GatewayConfig.MARKET_DATA_STREAM_ID, false));
        assertEquals("rdma:endpoint=127.0.0.1:20502|provider=tcp",
            config.channel(GatewayConfig.ORDER_STREAM_ID, false));
    }

    @Test
    void shouldRunOnlyTheNamedPartsOfARole()
    {
        final GatewayConfig config = GatewayConfig.parse("--role", "feed,orders", "--transport", "rdma");
        assertTrue(config.runs(Part.FEED));
        assertFalse(config.runs(Part.STRATEGY));
        assertTrue(config.runs(Part.ORDERS));
        assertEquals("feed,orders", config.roleName());
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "--frobnicate 1          | unknown flag '--frobnicate'",
        "--rate                  | --rate needs a value",
        "--rate abc              | --rate: 'abc' is not a whole number",
        "--rate 0                | --rate: 0 is out of range 1 to 5000000",
        "--instruments 5000      | --instruments: 5000 is out of range 1 to 4096",
        "--duration 10parsecs    | --duration: '10parsecs' is not a duration",
        "--duration 50ms         | --duration: '50ms' is shorter than the minimum of 100ms",
        "--duration 5s --warmup 5s | --warmup (5.0s) must be shorter than --duration (5.0s)",
        "--idle spinny           | --idle: unknown idle strategy 'spinny'",
        "--threads many          | --threads: 'many' must be shared or dedicated",
        "--transport carrier-pigeon | --transport: 'carrier-pigeon' must be ipc, aeron-ipc or rdma",
        "--provider ib           | --provider: 'ib' must be shm (one host), tcp or verbs",
        "--md-endpoint nohost    | --md-endpoint: 'nohost' must be host:port",
        "--md-endpoint h:99999   | --md-endpoint port: 99999 is out of range 1 to 65535",
        "--role feed,broker      | --role: unknown part 'broker'",
        "--role strategy         | --role strategy runs only some parts in this process",
        "--feed-cpu 0            | --feed-cpu, --strategy-cpu and --orders-cpu need --threads dedicated",
        "--threads dedicated --parts-cpu 0 | --parts-cpu pins the one shared parts thread",
        "--md-channel nonsense   | --md-channel: 'nonsense' is not a channel",
        "stray                   | unexpected argument 'stray'",
        "--imbalance 50          | --imbalance: 50 is out of range 51 to 100",
        "--launch cloud          | --launch: 'cloud' must be single or processes",
        "--launch processes --role feed --transport rdma | --role runs the named parts in this process",
        "--transport ipc         | --launch processes puts the parts in separate processes, " +
            "which needs --transport rdma",
    })
    void shouldRejectBadFlagsNamingTheFlagAndTheProblem(final String args, final String expectedMessageStart)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> GatewayConfig.parse(args.trim().split("\\s+")));
        assertTrue(ex.getMessage().startsWith(expectedMessageStart.trim()),
            "message was: " + ex.getMessage());
    }

    @Test
    void shouldRefuseMoreBusySpinningThreadsThanCores()
    {
        final int cores = Runtime.getRuntime().availableProcessors();
        if (cores < 4)
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> GatewayConfig.parse("--launch", "single", "--idle", "busy-spin", "--driver-idle", "busy-spin",
                    "--threads", "dedicated"));
            assertTrue(ex.getMessage().contains("would busy-spin 4 threads on " + cores + " cores"), ex.getMessage());
        }
        else
        {
            assertEquals(4, GatewayConfig.parse("--launch", "single", "--idle", "busy-spin", "--driver-idle",
                "busy-spin", "--threads", "dedicated").spinningThreads());
        }
    }

    @Test
    void shouldDescribeEveryFlagInTheUsage()
    {
        final String usage = GatewayConfig.usage();
        for (final String flag : new String[]{ "--duration", "--warmup", "--progress", "--out", "--rate",
            "--instruments", "--depth", "--burst", "--seed", "--imbalance", "--max-order-qty", "--position-limit",
            "--fill-percent", "--idle", "--busy-spin", "--driver-idle", "--threads", "--parts-cpu", "--feed-cpu",
            "--strategy-cpu", "--orders-cpu", "--driver-cpu", "--role", "--launch", "--transport", "--provider",
            "--md-endpoint",
            "--order-endpoint", "--report-endpoint", "--md-channel", "--order-channel", "--report-channel", "--dir",
            "--help", "--secret-file" })
        {
            assertTrue(usage.contains(flag), flag);
        }
    }
}
