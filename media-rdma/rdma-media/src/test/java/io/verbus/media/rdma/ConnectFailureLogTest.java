package io.verbus.media.rdma;

import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectFailureLogTest
{
    private final List<String> lines = new ArrayList<>();
    private final List<System.Logger.Level> levels = new ArrayList<>();
    private long nowNs = 1_000;

    private final System.Logger logger = new System.Logger()
    {
        public String getName()
        {
            return "test";
        }

        public boolean isLoggable(final Level level)
        {
            return true;
        }

        public void log(final Level level, final ResourceBundle bundle, final String message, final Throwable thrown)
        {
            levels.add(level);
            lines.add(message);
        }

        public void log(final Level level, final ResourceBundle bundle, final String format, final Object... params)
        {
            levels.add(level);
            lines.add(format);
        }
    };

    private final ConnectFailureLog log =
        new ConnectFailureLog(logger, "stream=1001 publisher=md-feed.example:40123", "md-feed.example:40123",
            () -> nowNs);

    @Test
    void shouldNameTheHostThatDoesNotResolveOnceThenAtMostEveryInterval()
    {
        assertTrue(log.onFailure(new UnknownHostException("md-feed.example")));
        assertEquals(System.Logger.Level.WARNING, levels.get(0));
        assertTrue(lines.get(0).contains("rdma subscription stream=1001 publisher=md-feed.example:40123: " +
            "cannot connect to md-feed.example:40123: host 'md-feed.example' does not resolve"), lines.get(0));

        for (int i = 0; i < 20; i++)
        {
            nowNs += TimeUnit.SECONDS.toNanos(1);
            assertFalse(log.onFailure(new UnknownHostException("md-feed.example")), "retry " + i + " stays quiet");
        }
        nowNs += ConnectFailureLog.INTERVAL_NS;
        assertTrue(log.onFailure(new UnknownHostException("md-feed.example")));
        assertTrue(lines.get(1).contains("(21 attempts so far)"), lines.get(1));
        assertEquals(2, lines.size());
    }

    @Test
    void shouldTellARefusedPortFromAnUnknownHostAndLogAChangeOfCauseAtOnce()
    {
        assertTrue(log.onFailure(new ConnectException("Connection refused")));
        assertEquals(System.Logger.Level.INFO, levels.get(0));
        assertTrue(lines.get(0).contains("nothing listens on port 40123 of md-feed.example (connection refused): " +
            "is the publisher up?"), lines.get(0));
        nowNs += TimeUnit.SECONDS.toNanos(1);
        assertTrue(log.onFailure(new SocketTimeoutException("connect timed out")), "a new cause is news");
        assertTrue(lines.get(1).contains("did not answer in time"), lines.get(1));

        log.onConnected();
        nowNs += TimeUnit.SECONDS.toNanos(1);
        assertTrue(log.onFailure(new SocketTimeoutException("connect timed out")), "after a connection, news again");
        assertEquals(3, lines.size());
    }
}
