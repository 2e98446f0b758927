package io.verbus.samples;

import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Image;
import io.verbus.Publication;
import io.verbus.Subscription;
import org.agrona.concurrent.IdleStrategy;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Small pieces the samples share: printing what arrives, polling until stopped, naming an offer's result.
 */
public final class SamplesUtil
{
    private SamplesUtil()
    {
    }

    /**
     * @param streamId printed with each message.
     * @return a handler that prints each message as text with its session, length and offset.
     */
    public static FragmentHandler printAsciiMessage(final int streamId)
    {
        return (buffer, offset, length, header) ->
        {
            final String text = buffer.getStringWithoutLengthAscii(offset, length);
            System.out.printf("Message to stream %d from session %d (%d@%d) <<%s>>%n",
                streamId, header.sessionId(), length, offset, text);
        };
    }

    /**
     * Polls a subscription until {@code running} turns false, idling when there is nothing to read.
     *
     * @param running          cleared to stop.
     * @param fragmentHandler  for each fragment.
     * @param fragmentLimit    per poll.
     * @param subscription     to poll.
     * @param idleStrategy     between empty polls.
     */
    public static void pollUntilStopped(
        final AtomicBoolean running,
        final FragmentHandler fragmentHandler,
        final int fragmentLimit,
        final Subscription subscription,
        final IdleStrategy idleStrategy)
    {
        while (running.get())
        {
            idleStrategy.idle(subscription.poll(fragmentHandler, fragmentLimit));
        }
    }

    /** Prints an image that joined. */
    public static void printAvailableImage(final Image image)
    {
        System.out.printf("Available image on stream %d from %s: session %d joined at position %d%n",
            image.streamId(), image.sourceIdentity(), image.sessionId(), image.joinPosition());
    }

    /** Prints an image that left. */
    public static void printUnavailableImage(final Image image)
    {
        System.out.printf("Unavailable image on stream %d from %s: session %d at position %d%n",
            image.streamId(), image.sourceIdentity(), image.sessionId(), image.position());
    }

    /**
     * @param result of an offer or claim.
     * @return what it means, in words.
     */
    public static String describeOfferResult(final long result)
    {
        if (result > 0)
        {
            return "position " + result;
        }
        if (Publication.NOT_CONNECTED == result)
        {
            return "not connected: no subscriber yet";
        }
        if (Publication.BACK_PRESSURED == result)
        {
            return "back pressured: the slowest subscriber is a window behind";
        }
        if (Publication.ADMIN_ACTION == result)
        {
            return "admin action: the log rotated, try again";
        }
        if (Publication.CLOSED == result)
        {
            return "closed";
        }
        if (Publication.MAX_POSITION_EXCEEDED == result)
        {
            return "max position exceeded: the stream is full";
        }
        return "unknown result " + result;
    }

    /** @return the bytes of a string as US-ASCII. */
    public static byte[] ascii(final String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
