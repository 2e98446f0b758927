package io.verbus.log;

import io.aeron.logbuffer.BufferClaim;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;

/**
 * Lets a direct-mode {@link ExclusiveLogPublication} send a claimed frame the moment {@link BufferClaim#commit()}
 * (or {@link BufferClaim#abort()}) publishes it, instead of leaving it for the writer's next call or the sender
 * agent.
 * <p>
 * Why this shape: Aeron's {@code BufferClaim} is final and commits by a release store of the frame length through
 * its own private {@code UnsafeBuffer}, so that buffer is the only place a commit can be seen. The first time a
 * {@code BufferClaim} instance is used with a direct-mode publication, its buffer is replaced (once, by reflection)
 * with a {@link SignallingBuffer}: an {@code UnsafeBuffer} whose {@code putIntRelease} at offset 0 (the frame
 * length: commit and abort both end with it) tells the publication that armed it. Each claim arms it after wrapping
 * it; any other wrap (the same claim used with another publication) disarms it, so a commit only ever signals the
 * publication whose frame it committed, and only once. After that first use nothing is allocated.
 * <p>
 * Where the JDK refuses the replacement (a future release that makes final fields final), {@link #isAvailable()}
 * is false and a committed claim is sent as before: by the next offer, claim or flush, or by the sender agent.
 */
final class ClaimCommitSignal
{
    private static final Field BUFFER_FIELD;
    private static final VarHandle BUFFER;

    static
    {
        Field field = null;
        VarHandle handle = null;
        try
        {
            field = BufferClaim.class.getDeclaredField("buffer");
            field.setAccessible(true);
            handle = MethodHandles.privateLookupIn(BufferClaim.class, MethodHandles.lookup())
                .unreflectVarHandle(field);
            // Prove the replacement works here, once, rather than on a user's claim.
            final BufferClaim probe = new BufferClaim();
            final SignallingBuffer signalling = new SignallingBuffer();
            field.set(probe, signalling);
            if ((UnsafeBuffer)handle.get(probe) != signalling)
            {
                field = null;
                handle = null;
            }
        }
        catch (final ReflectiveOperationException | RuntimeException ex)
        {
            field = null;
            handle = null;
        }
        BUFFER_FIELD = field;
        BUFFER = handle;
    }

    private ClaimCommitSignal()
    {
    }

    /** @return true when commits of armed claims signal their publication. */
    static boolean isAvailable()
    {
        return null != BUFFER;
    }

    /**
     * Arms a claim that has just been wrapped over a frame of {@code publication}: its commit or abort will call
     * {@link ExclusiveLogPublication#onClaimCommitted()}.
     *
     * @return false when the signal is not available (then the caller must send committed claims itself).
     */
    static boolean arm(final BufferClaim claim, final ExclusiveLogPublication publication)
    {
        if (null == BUFFER)
        {
            return false;
        }
        // The cast makes the call site's type exactly the handle's, so the access compiles to a plain field load.
        final UnsafeBuffer buffer = (UnsafeBuffer)BUFFER.get(claim);
        final SignallingBuffer signalling;
        if (buffer instanceof SignallingBuffer)
        {
            signalling = (SignallingBuffer)buffer;
        }
        else
        {
            // First use of this claim with a direct-mode publication: the one allocation, then never again.
            final UnsafeBuffer plain = buffer;
            signalling = new SignallingBuffer();
            signalling.wrap(plain, 0, plain.capacity());
            try
            {
                BUFFER_FIELD.set(claim, signalling);
            }
            catch (final IllegalAccessException ex)
            {
                return false; // cannot happen once the probe passed; the caller falls back to sending later
            }
        }
        signalling.publication = publication;
        return true;
    }

    /**
     * The claim's buffer: plain {@code UnsafeBuffer} behaviour, plus a signal to the arming publication when the
     * frame length is stored with release semantics, which is what commit and abort do last.
     */
    static final class SignallingBuffer extends UnsafeBuffer
    {
        ExclusiveLogPublication publication;

        SignallingBuffer()
        {
            super(0, 0);
        }

        public void wrap(final DirectBuffer buffer, final int offset, final int length)
        {
            publication = null; // a new claim (by whichever publication) must arm it again
            super.wrap(buffer, offset, length);
        }

        public void putIntRelease(final int index, final int value)
        {
            super.putIntRelease(index, value);
            final ExclusiveLogPublication publication = this.publication;
            if (0 == index && null != publication)
            {
                this.publication = null;
                publication.onClaimCommitted();
            }
        }
    }
}
