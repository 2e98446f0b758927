package io.verbus.media.rdma;

import io.aeron.exceptions.AeronException;
import io.verbus.media.rdma.protocol.HandshakeException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.verbus.media.rdma.HandshakeFailureReport.REPEAT_INTERVAL_NS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HandshakeFailureReportTest
{
    private final List<Throwable> reported = new ArrayList<>();
    private final HandshakeFailureReport report =
        new HandshakeFailureReport(reported::add, "stream=1001 publisher=feed:40123");

    private static HandshakeException failure(final HandshakeException.Reason reason, final String detail)
    {
        return new HandshakeException(reason, detail);
    }

    @Test
    void shouldReportTheFirstFailureAsAWarningNamingSubscriptionAndCause()
    {
        final AeronException made =
            report.onFailure(failure(HandshakeException.Reason.AUTHENTICATION_FAILED, "CHALLENGE.proof"), 0);

        assertNotNull(made);
        assertEquals(List.of(made), reported);
        assertEquals(AeronException.Category.WARN, made.category());
        assertEquals(0, made.getStackTrace().length, "no stack trace: the cause is the message");
        assertTrue(made.getMessage().contains("rdma subscription stream=1001 publisher=feed:40123: handshake " +
            "failed: AUTHENTICATION_FAILED: CHALLENGE.proof"), made.getMessage());
    }

    @Test
    void shouldReportTheSameCauseAgainOnlyAfterTheInterval()
    {
        final HandshakeException ex = failure(HandshakeException.Reason.PROVIDER_MISMATCH, "tcp, not shm");
        report.onFailure(ex, 1_000);
        assertNull(report.onFailure(ex, 1_000 + REPEAT_INTERVAL_NS - 1));
        assertEquals(1, reported.size());

        assertNotNull(report.onFailure(ex, 1_000 + REPEAT_INTERVAL_NS));
        assertEquals(2, reported.size());
    }

    @Test
    void shouldReportANewCauseAtOnce()
    {
        report.onFailure(failure(HandshakeException.Reason.STREAM_MISMATCH, "stream 7"), 0);
        assertNotNull(report.onFailure(failure(HandshakeException.Reason.SESSION_MISMATCH, "session 9"), 1));
        assertNotNull(report.onFailure(failure(HandshakeException.Reason.STREAM_MISMATCH, "stream 7"), 2));
        assertEquals(3, reported.size());
    }

    @Test
    void shouldReportAPeerThatVariesItsRejectTextOnlyOnceForItsReason()
    {
        // A REJECT carries no proof: whoever answers the endpoint chooses its text, and retries come 4 a second.
        for (int i = 0; i < 100; i++)
        {
            report.onFailure(HandshakeException.rejectedByPeer(HandshakeException.Reason.STREAM_MISMATCH,
                "publisher rejected (STREAM_MISMATCH): attempt " + i), i);
        }
        assertEquals(1, reported.size(), "one report for one reason");
        assertNotNull(report.onFailure(HandshakeException.rejectedByPeer(HandshakeException.Reason.SESSION_MISMATCH,
            "publisher rejected (SESSION_MISMATCH): attempt 100"), 100), "another reason is news");
    }

    @Test
    void shouldNotReportTimeoutsOrAPublisherThatClosed()
    {
        assertNull(report.onFailure(failure(HandshakeException.Reason.TIMEOUT, "no CHALLENGE in 5000 ms"), 0));
        assertNull(report.onFailure(failure(HandshakeException.Reason.CLOSED, "peer closed"), 1));
        assertTrue(reported.isEmpty());
    }

    @Test
    void shouldNotReportAPublisherThatRejectedForATimeoutButReportItsOtherRejections()
    {
        // A loaded host: the publisher gave up waiting for this subscriber's next message (seen in ./verbus soak).
        assertNull(report.onFailure(HandshakeException.rejectedByPeer(HandshakeException.Reason.TIMEOUT,
            "publisher rejected (TIMEOUT): no message within 1000 ms"), 0));
        assertNull(report.onFailure(HandshakeException.rejectedByPeer(HandshakeException.Reason.CLOSED,
            "publisher rejected (CLOSED): closing"), 1));
        assertTrue(reported.isEmpty());

        final AeronException made = report.onFailure(HandshakeException.rejectedByPeer(
            HandshakeException.Reason.AUTHENTICATION_FAILED, "publisher rejected (AUTHENTICATION_FAILED): proof"), 2);
        assertNotNull(made);
        assertTrue(made.getMessage().contains("PEER_REJECTED: publisher rejected (AUTHENTICATION_FAILED)"),
            made.getMessage());
    }

    @Test
    void shouldReportTheSameCauseAgainAfterAConnection()
    {
        final HandshakeException ex = failure(HandshakeException.Reason.COMMIT_MISMATCH, "imm, not counter");
        report.onFailure(ex, 0);
        report.onConnected();
        assertNotNull(report.onFailure(ex, 1));
        assertEquals(2, reported.size());
    }
}
