package io.verbus.media.rdma;

import io.aeron.exceptions.AeronException;
import io.verbus.media.rdma.protocol.HandshakeException;
import org.agrona.ErrorHandler;

import java.util.concurrent.TimeUnit;

/**
 * Tells the application why a subscription's handshakes fail, through the driver's error handler (so
 * {@code Verbus.Context.errorHandler} and the {@code errors} counter), not only the log: a wrong secret, provider,
 * stream, session or commit mode is a configuration error that the application can act on, and without this its
 * subscription just never connects. Reported as an Aeron {@link AeronException} of category {@code WARN} (the
 * subscription goes on retrying), without a stack trace: when failures start, again at once when the cause changes,
 * and otherwise at most every {@link #REPEAT_INTERVAL_NS} while they go on (the subscription retries several times a
 * second). A handshake that timed out or was closed, on this side or by the publisher's REJECT (a publisher that
 * gave up waiting on a loaded host), is not reported: that is a publisher going away or a slow host, which retrying
 * rides out. Used by one control thread.
 */
final class HandshakeFailureReport
{
    /** How long the same cause stays unreported after it was reported. */
    static final long REPEAT_INTERVAL_NS = TimeUnit.SECONDS.toNanos(30);

    private final ErrorHandler errorHandler;
    private final String subscriptionName;
    private String lastCause;
    private long lastReportedNs;

    /**
     * @param errorHandler     the driver's error handler.
     * @param subscriptionName names the subscription in the report, e.g. {@code stream=1001 publisher=h:40123}.
     */
    HandshakeFailureReport(final ErrorHandler errorHandler, final String subscriptionName)
    {
        this.errorHandler = errorHandler;
        this.subscriptionName = subscriptionName;
    }

    /**
     * A handshake failed.
     *
     * @param ex    why.
     * @param nowNs the time.
     * @return the report, when one was made, else null.
     */
    AeronException onFailure(final HandshakeException ex, final long nowNs)
    {
        if (isTransient(ex.reason()) ||
            (HandshakeException.Reason.PEER_REJECTED == ex.reason() && isTransient(ex.peerReason())))
        {
            return null;
        }
        // A REJECT is not authenticated (anyone answering the endpoint can send one), so its text is not what makes a
        // cause new: keyed on the text, a peer varying it on every retry (4 a second) made each one a report and
        // filled the driver's distinct error log. The reason it carries is a short, fixed list.
        final String cause = HandshakeException.Reason.PEER_REJECTED == ex.reason() ?
            ex.reason() + "/" + ex.peerReason() : ex.getMessage();
        if (cause.equals(lastCause) && nowNs - lastReportedNs < REPEAT_INTERVAL_NS)
        {
            return null;
        }
        lastCause = cause;
        lastReportedNs = nowNs;
        final AeronException report = new AeronException("rdma subscription " + subscriptionName +
            ": handshake failed: " + ex.getMessage() + "; nothing registered for it; retrying (reported again when " +
            "the cause changes, or every " + TimeUnit.NANOSECONDS.toSeconds(REPEAT_INTERVAL_NS) + " s while it lasts)",
            null, false, false, AeronException.Category.WARN);
        errorHandler.onError(report);
        return report;
    }

    /** A timeout or a close, on either side: a slow host or a publisher going away, which retrying rides out. */
    private static boolean isTransient(final HandshakeException.Reason reason)
    {
        return HandshakeException.Reason.TIMEOUT == reason || HandshakeException.Reason.CLOSED == reason;
    }

    /** A handshake succeeded: the next failure is news again. */
    void onConnected()
    {
        lastCause = null;
    }
}
