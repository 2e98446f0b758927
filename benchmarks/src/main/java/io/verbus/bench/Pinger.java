package io.verbus.bench;

/**
 * The pinging end of a round trip, owned by the pinger thread. Every message starts with its 8-byte sequence number
 * so the echo can be checked; a contender whose data path needs a duty cycle (an invoked driver) runs it here.
 */
public interface Pinger
{
    /**
     * Sends one message.
     *
     * @param sequence to write into the first 8 bytes.
     * @param length   of the message in bytes.
     * @return true when sent, false when it could not be sent now (back-pressure) and the caller should retry.
     */
    boolean send(long sequence, int length);

    /**
     * Polls once for the echo.
     *
     * @param sequence the sequence number last sent.
     * @return true when the echo of {@code sequence} has arrived; a late echo of an earlier sequence (from a run that
     * was given up) is dropped ({@code MessageHeader.isEchoOf}).
     * @throws IllegalStateException when an echo carries a sequence number not sent yet.
     */
    boolean pollEcho(long sequence);
}
