package io.verbus.media.rdma;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Says why a subscription cannot reach its publisher's endpoint: one log line naming the endpoint and the cause
 * when the failures start, then at most one per interval while they go on (the subscription retries up to four
 * times a second, so a line per retry would bury everything else), and again at once when the cause changes. A
 * host that does not resolve is a WARNING (most likely a typo); a refused or timed-out connection is INFO (most
 * likely a publisher that is not up yet). Used by one control thread.
 */
final class ConnectFailureLog
{
    /** How long the same cause stays quiet after it was logged. */
    static final long INTERVAL_NS = TimeUnit.SECONDS.toNanos(30);

    private final System.Logger logger;
    private final String subscriptionName;
    private final String endpoint;
    private final LongSupplier nanoClock;
    private String lastCause;
    private long lastLoggedNs;
    private int failuresSinceLogged;

    /**
     * @param logger           where the lines go.
     * @param subscriptionName names the subscription in the line, e.g. {@code stream=1001 publisher=h:40123}.
     * @param endpoint         the {@code host:port} it connects to.
     * @param nanoClock        for the interval.
     */
    ConnectFailureLog(
        final System.Logger logger, final String subscriptionName, final String endpoint, final LongSupplier nanoClock)
    {
        this.logger = logger;
        this.subscriptionName = subscriptionName;
        this.endpoint = endpoint;
        this.nanoClock = nanoClock;
    }

    /**
     * A connection attempt failed.
     *
     * @param ex why.
     * @return true when a line was logged.
     */
    boolean onFailure(final Exception ex)
    {
        final String cause = cause(ex);
        final long nowNs = nanoClock.getAsLong();
        failuresSinceLogged++;
        if (cause.equals(lastCause) && nowNs - lastLoggedNs < INTERVAL_NS)
        {
            return false;
        }
        final String repeats = failuresSinceLogged > 1 ? " (" + failuresSinceLogged + " attempts so far)" : "";
        logger.log(ex instanceof UnknownHostException ? System.Logger.Level.WARNING : System.Logger.Level.INFO,
            "rdma subscription " + subscriptionName + ": cannot connect to " + endpoint + ": " + cause + repeats +
            "; retrying, this line repeats at most every " + TimeUnit.NANOSECONDS.toSeconds(INTERVAL_NS) +
            " s while it lasts");
        lastCause = cause;
        lastLoggedNs = nowNs;
        failuresSinceLogged = 0;
        return true;
    }

    /** The endpoint answered: the next failure is news again. */
    void onConnected()
    {
        lastCause = null;
        failuresSinceLogged = 0;
    }

    /** @return the cause in words, naming the part of the endpoint that is at fault. */
    String cause(final Exception ex)
    {
        final int colon = endpoint.lastIndexOf(':');
        final String host = colon > 0 ? endpoint.substring(0, colon) : endpoint;
        final String port = colon > 0 ? endpoint.substring(colon + 1) : "?";
        if (ex instanceof UnknownHostException)
        {
            return "host '" + host + "' does not resolve (unknown host)";
        }
        if (ex instanceof ConnectException)
        {
            return "nothing listens on port " + port + " of " + host + " (connection refused): is the publisher up?";
        }
        if (ex instanceof SocketTimeoutException)
        {
            return host + " did not answer in time (connect timed out)";
        }
        if (ex instanceof NoRouteToHostException)
        {
            return "no route to host " + host;
        }
        return ex.toString();
    }
}
