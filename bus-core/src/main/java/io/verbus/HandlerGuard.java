package io.verbus;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;

/**
 * Stands between an image and the application's handler during a poll, so that a handler that throws cannot
 * escape into the application's poll loop half way through the fragments (as Aeron's {@code Image.poll} does, the
 * exception goes to an error handler instead). The fragment that threw counts as consumed, like every fragment
 * handed to a handler: redelivering it would most likely throw again and wedge the stream. The exception goes to
 * the Verbus error handler (logged and counted in {@code errors}, or the context's {@code errorHandler}), and the
 * poll carries on with the next fragment and returns normally.
 * <p>
 * Only {@link Exception}s are caught: an {@link Error} (an {@code AssertionError} in a test, {@code OutOfMemoryError})
 * propagates as before, after the fragment was consumed.
 * <p>
 * One instance per subscription, polled by the subscription's one thread: the delegate is a plain field set per
 * poll, so the guard allocates nothing.
 */
final class HandlerGuard
{
    private final ErrorHandler errorHandler;
    private final Plain plain = new Plain();
    private final Controlled controlled = new Controlled();

    HandlerGuard(final ErrorHandler errorHandler)
    {
        this.errorHandler = errorHandler;
    }

    /** @return the guard around {@code handler} for one poll. */
    FragmentHandler guard(final FragmentHandler handler)
    {
        if (null == handler)
        {
            throw new IllegalArgumentException("poll: fragmentHandler must not be null");
        }
        plain.delegate = handler;
        return plain;
    }

    /** @return the guard around {@code handler} for one controlled poll. */
    ControlledFragmentHandler guard(final ControlledFragmentHandler handler)
    {
        if (null == handler)
        {
            throw new IllegalArgumentException("controlledPoll: fragmentHandler must not be null");
        }
        controlled.delegate = handler;
        return controlled;
    }

    private void onHandlerException(final Exception ex, final Header header)
    {
        errorHandler.onError(new IllegalStateException("fragment handler threw on stream " + header.streamId() +
            " session " + header.sessionId() + " at position " + header.position() +
            ": the fragment counts as consumed", ex));
    }

    private final class Plain implements FragmentHandler
    {
        private FragmentHandler delegate;

        public void onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header)
        {
            try
            {
                delegate.onFragment(buffer, offset, length, header);
            }
            catch (final Exception ex)
            {
                onHandlerException(ex, header);
            }
        }
    }

    private final class Controlled implements ControlledFragmentHandler
    {
        private ControlledFragmentHandler delegate;

        public Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header)
        {
            try
            {
                return delegate.onFragment(buffer, offset, length, header);
            }
            catch (final Exception ex)
            {
                onHandlerException(ex, header);
                return Action.CONTINUE;
            }
        }
    }
}
