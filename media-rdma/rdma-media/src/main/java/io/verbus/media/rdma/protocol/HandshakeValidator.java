package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;

import static io.verbus.media.rdma.protocol.HandshakeException.Reason.MALFORMED;
import static io.verbus.media.rdma.protocol.HandshakeException.Reason.OUT_OF_RANGE;
import static io.verbus.media.rdma.protocol.HandshakeException.Reason.STREAM_MISMATCH;
import static io.verbus.media.rdma.protocol.HandshakeException.Reason.UNSUPPORTED_VERSION;

/**
 * Judges every field of every handshake message against its bounds before anything uses it. Each method
 * throws a {@link HandshakeException} naming the message, the field and the value.
 */
public final class HandshakeValidator
{
    public static final int MIN_TERM_LENGTH = 64 * 1024;
    public static final int MAX_TERM_LENGTH = 1024 * 1024 * 1024;
    public static final int MIN_MTU_LENGTH = 64;
    public static final int MAX_MTU_LENGTH = 64 * 1024;
    public static final int PARTITION_COUNT = 3;
    public static final int FRAME_ALIGNMENT = 32;
    /** Remote addresses we accept are at least 8-byte aligned: the blocks hold 8-byte values. */
    public static final int MIN_REMOTE_ALIGNMENT = 8;
    public static final int MAX_PROVIDER_ID = ProviderIds.MAX;
    /** Most WRITE_WITH_IMMs a subscriber may let a publisher keep in flight (the deepest queue a channel asks for). */
    public static final int MAX_RECEIVE_CREDITS = 16384;

    private HandshakeValidator()
    {
    }

    /**
     * Check the header of a received message: magic, version, the type expected at this step (or REJECT),
     * and the announced length against both the type and what was actually received.
     *
     * @return the message type.
     */
    public static short validateHeader(
        final DirectBuffer buffer, final int offset, final int receivedLength, final short expectedType)
        throws HandshakeException
    {
        if (receivedLength < HandshakeHeader.LENGTH)
        {
            throw new HandshakeException(MALFORMED, "message of " + receivedLength + " bytes is shorter than a header");
        }
        final int magic = HandshakeHeader.magic(buffer, offset);
        if (HandshakeHeader.MAGIC != magic)
        {
            throw new HandshakeException(MALFORMED, "bad magic 0x" + Integer.toHexString(magic));
        }
        final short type = HandshakeHeader.type(buffer, offset);
        final String name = HandshakeHeader.typeName(type);
        final short version = HandshakeHeader.version(buffer, offset);
        if (version < HandshakeHeader.MIN_SUPPORTED_VERSION || version > HandshakeHeader.MAX_SUPPORTED_VERSION)
        {
            throw new HandshakeException(UNSUPPORTED_VERSION, name + ".version=" + version + " not in [" +
                HandshakeHeader.MIN_SUPPORTED_VERSION + ", " + HandshakeHeader.MAX_SUPPORTED_VERSION + "]");
        }
        final int length = HandshakeHeader.length(buffer, offset);
        if (length != receivedLength)
        {
            throw new HandshakeException(MALFORMED, name + ".length=" + length + " but " + receivedLength +
                " bytes received");
        }
        if (HandshakeHeader.REJECT_TYPE == type)
        {
            if (length < RejectFlyweight.MIN_LENGTH || length > RejectFlyweight.MAX_LENGTH)
            {
                throw new HandshakeException(MALFORMED, "REJECT.length=" + length + " not in [" +
                    RejectFlyweight.MIN_LENGTH + ", " + RejectFlyweight.MAX_LENGTH + "]");
            }
            return type;
        }
        if (type != expectedType)
        {
            throw new HandshakeException(MALFORMED, "expected " + HandshakeHeader.typeName(expectedType) +
                " but got " + name);
        }
        final int expectedLength = HandshakeHeader.expectedLength(type);
        if (length != expectedLength)
        {
            throw new HandshakeException(MALFORMED, name + ".length=" + length + " but must be " + expectedLength);
        }
        return type;
    }

    /**
     * Check a HELLO for the given publication.
     *
     * @return the version both sides will speak.
     */
    public static short validateHello(final HelloFlyweight hello, final int streamId) throws HandshakeException
    {
        final short min = hello.minVersion();
        final short max = hello.maxVersion();
        if (min > max || min < 1)
        {
            throw new HandshakeException(MALFORMED, "HELLO.minVersion=" + min + " / maxVersion=" + max +
                " is not a range");
        }
        if (max < HandshakeHeader.MIN_SUPPORTED_VERSION || min > HandshakeHeader.MAX_SUPPORTED_VERSION)
        {
            throw new HandshakeException(UNSUPPORTED_VERSION, "HELLO versions [" + min + ", " + max +
                "] do not overlap [" + HandshakeHeader.MIN_SUPPORTED_VERSION + ", " +
                HandshakeHeader.MAX_SUPPORTED_VERSION + "]");
        }
        if (hello.streamId() != streamId)
        {
            throw new HandshakeException(STREAM_MISMATCH, "HELLO.streamId=" + hello.streamId() +
                " but this publication is stream " + streamId);
        }
        final int flags = hello.flags();
        if (0 != (flags & ~HelloFlyweight.KNOWN_FLAGS))
        {
            throw new HandshakeException(OUT_OF_RANGE, "HELLO.flags=0x" + Integer.toHexString(flags) +
                " has unknown bits");
        }
        if (0 == (flags & HelloFlyweight.GROUP_TAG_FLAG) && 0 != hello.groupTag())
        {
            throw new HandshakeException(OUT_OF_RANGE, "HELLO.groupTag=" + hello.groupTag() +
                " without the group-tag flag");
        }
        return (short)Math.min(max, HandshakeHeader.MAX_SUPPORTED_VERSION);
    }

    /** Check a CHALLENGE against what this subscription asked for (providerId 0 = any). */
    public static void validateChallenge(
        final ChallengeFlyweight challenge, final int streamId, final int requiredProviderId)
        throws HandshakeException
    {
        if (challenge.streamId() != streamId)
        {
            throw new HandshakeException(STREAM_MISMATCH, "CHALLENGE.streamId=" + challenge.streamId() +
                " but this subscription is stream " + streamId);
        }
        validateTermLength("CHALLENGE.termLength", challenge.termLength());
        final int mtu = challenge.mtuLength();
        if (mtu < MIN_MTU_LENGTH || mtu > MAX_MTU_LENGTH || 0 != (mtu & (FRAME_ALIGNMENT - 1)) ||
            mtu > challenge.termLength())
        {
            throw new HandshakeException(OUT_OF_RANGE, "CHALLENGE.mtuLength=" + mtu + " must be a multiple of " +
                FRAME_ALIGNMENT + " in [" + MIN_MTU_LENGTH + ", " + MAX_MTU_LENGTH + "] and <= termLength");
        }
        final int providerId = challenge.providerId();
        if (providerId < 1 || providerId > MAX_PROVIDER_ID)
        {
            throw new HandshakeException(OUT_OF_RANGE, "CHALLENGE.providerId=" + providerId + " not in [1, " +
                MAX_PROVIDER_ID + "] (shm, tcp, verbs)");
        }
        if (0 != requiredProviderId && providerId != requiredProviderId)
        {
            throw new HandshakeException(HandshakeException.Reason.PROVIDER_MISMATCH, "the publisher uses provider " +
                ProviderIds.name(providerId) + " but this subscription requires provider=" +
                ProviderIds.name(requiredProviderId) + " (CHALLENGE.providerId=" + providerId + ")");
        }
        final int commit = challenge.commit();
        final int mode = commit & ~ChallengeFlyweight.COMMIT_AUTO_PREFERS_IMM_FLAG;
        if (mode < ChallengeFlyweight.COMMIT_COUNTER || mode > ChallengeFlyweight.COMMIT_AUTO ||
            (mode != ChallengeFlyweight.COMMIT_AUTO && mode != commit))
        {
            throw new HandshakeException(OUT_OF_RANGE, "CHALLENGE.commit=0x" + Integer.toHexString(commit) +
                " must be 0 (counter), 1 (imm) or 2 (auto, +0x100 when its device asks for imm)");
        }
    }

    /** Check a CONNECT against the log it will receive (ring = three partitions of termLength). */
    public static void validateConnect(final ConnectFlyweight connect, final int termLength,
        final QpInfoCodec.QpInfo scratch) throws HandshakeException
    {
        if (0 != connect.reserved())
        {
            throw new HandshakeException(MALFORMED, "CONNECT.reserved=" + connect.reserved() + " must be 0");
        }
        validateCommit(connect.commit(), connect.receiveCredits());
        validateRegion("CONNECT.ring", connect.ring(), (long)PARTITION_COUNT * termLength, FRAME_ALIGNMENT,
            " (3 x termLength " + termLength + ")");
        validateRegion("CONNECT.counter", connect.counter(), SlotLayout.BLOCK_LENGTH, MIN_REMOTE_ALIGNMENT, "");
        connect.getQpInfo(scratch);
        validateQpInfo("CONNECT.qp", scratch);
        final long catchUp = connect.catchUpPosition();
        if (ConnectFlyweight.CATCH_UP_NONE != catchUp && ConnectFlyweight.CATCH_UP_TERM_START != catchUp)
        {
            validatePosition("CONNECT.catchUpPosition", catchUp, termLength);
        }
    }

    private static void validatePosition(final String name, final long position, final int termLength)
        throws HandshakeException
    {
        final long maxPosition = (long)termLength * (1L << 31) - termLength;
        if (position < 0 || position > maxPosition || 0 != (position & (FRAME_ALIGNMENT - 1)))
        {
            throw new HandshakeException(OUT_OF_RANGE, name + "=" + position +
                " must be a multiple of " + FRAME_ALIGNMENT + " in [0, " + maxPosition + "]");
        }
    }

    /**
     * Check the catch-up part of an ACCEPT: a start at most one term before the join position (the ring holds what
     * the catch-up READs and the live WRITEs that follow), and the READ-only log registration exactly when a
     * catch-up was granted.
     */
    private static void validateCatchUp(final AcceptFlyweight accept, final int termLength)
        throws HandshakeException
    {
        final long joinPosition = accept.joinPosition();
        final long catchUp = accept.catchUpPosition();
        validatePosition("ACCEPT.catchUpPosition", catchUp, termLength);
        if (catchUp > joinPosition || joinPosition - catchUp > termLength)
        {
            throw new HandshakeException(OUT_OF_RANGE, "ACCEPT.catchUpPosition=" + catchUp +
                " must be in [joinPosition - termLength, joinPosition] (joinPosition " + joinPosition + ")");
        }
        final long oldest = accept.oldestPosition();
        if (-1 != oldest && (oldest < 0 || oldest > joinPosition))
        {
            throw new HandshakeException(OUT_OF_RANGE, "ACCEPT.oldestPosition=" + oldest +
                " must be -1 or in [0, joinPosition " + joinPosition + "]");
        }
        if (catchUp < joinPosition)
        {
            validateRegion("ACCEPT.log", accept.log(), (long)PARTITION_COUNT * termLength, FRAME_ALIGNMENT,
                " (3 x termLength " + termLength + ")");
        }
        else if (!accept.log().isEmpty())
        {
            throw new HandshakeException(OUT_OF_RANGE,
                "ACCEPT.log address/length/rkey must be 0 when no catch-up is granted");
        }
    }

    /**
     * Check CONNECT's agreed commit mode and receive credits: counter with no credits, or imm with 1..
     * {@link #MAX_RECEIVE_CREDITS} (the RECVs the subscriber keeps posted).
     */
    static void validateCommit(final int commit, final int credits) throws HandshakeException
    {
        if (ChallengeFlyweight.COMMIT_COUNTER == commit)
        {
            if (0 != credits)
            {
                throw new HandshakeException(OUT_OF_RANGE, "CONNECT.receiveCredits=" + credits +
                    " must be 0 with commit=counter");
            }
        }
        else if (ChallengeFlyweight.COMMIT_IMM == commit)
        {
            if (credits < 1 || credits > MAX_RECEIVE_CREDITS)
            {
                throw new HandshakeException(OUT_OF_RANGE, "CONNECT.receiveCredits=" + credits +
                    " must be in [1, " + MAX_RECEIVE_CREDITS + "] with commit=imm");
            }
        }
        else
        {
            throw new HandshakeException(OUT_OF_RANGE, "CONNECT.commit=" + commit +
                " must be 0 (counter) or 1 (imm)");
        }
    }

    /** Check an ACCEPT against the log announced in the CHALLENGE. */
    public static void validateAccept(final AcceptFlyweight accept, final int termLength,
        final QpInfoCodec.QpInfo scratch) throws HandshakeException
    {
        if (0 != accept.reserved())
        {
            throw new HandshakeException(MALFORMED, "ACCEPT.reserved=" + accept.reserved() + " must be 0");
        }
        validateRegion("ACCEPT.status", accept.status(), SlotLayout.BLOCK_LENGTH, MIN_REMOTE_ALIGNMENT, "");
        final long joinPosition = accept.joinPosition();
        final long maxPosition = (long)termLength * (1L << 31) - termLength;
        if (joinPosition < 0 || joinPosition > maxPosition || 0 != (joinPosition & (FRAME_ALIGNMENT - 1)))
        {
            throw new HandshakeException(OUT_OF_RANGE, "ACCEPT.joinPosition=" + joinPosition +
                " must be a multiple of " + FRAME_ALIGNMENT + " in [0, " + maxPosition + "]");
        }
        accept.getQpInfo(scratch);
        validateQpInfo("ACCEPT.qp", scratch);
        validateCatchUp(accept, termLength);
    }

    public static void validateQpInfo(final String name, final QpInfoCodec.QpInfo info) throws HandshakeException
    {
        if (info.qpn <= 0 || info.qpn > QpInfoCodec.MAX_24_BIT)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + ".qpn=" + info.qpn + " not in [1, 0xFFFFFF]");
        }
        if (info.psn < 0 || info.psn > QpInfoCodec.MAX_24_BIT)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + ".psn=" + info.psn + " not in [0, 0xFFFFFF]");
        }
        if (info.lid < 0 || info.lid > QpInfoCodec.MAX_LID)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + ".lid=" + info.lid + " not in [0, 0xFFFF]");
        }
        final int mtu = info.pathMtu;
        if (mtu < QpInfoCodec.MIN_PATH_MTU || mtu > QpInfoCodec.MAX_PATH_MTU || Integer.bitCount(mtu) != 1)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + ".pathMtu=" + mtu +
                " not one of 256, 512, 1024, 2048, 4096");
        }
        if (info.maxInline < 0 || info.maxInline > QpInfoCodec.MAX_INLINE_LIMIT)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + ".maxInline=" + info.maxInline + " not in [0, " +
                QpInfoCodec.MAX_INLINE_LIMIT + "]");
        }
        if (info.addressLength < 0 || info.addressLength > QpInfoCodec.ADDRESS_MAX_LENGTH)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + ".addressLength=" + info.addressLength +
                " not in [0, " + QpInfoCodec.ADDRESS_MAX_LENGTH + "]");
        }
        for (int i = 0; i < info.addressLength; i++)
        {
            final byte b = info.address[i];
            if (b < 0x20 || b > 0x7e)
            {
                throw new HandshakeException(OUT_OF_RANGE, name + ".address has a non-printable byte at " + i);
            }
        }
    }

    public static void validateTermLength(final String name, final int termLength) throws HandshakeException
    {
        if (termLength < MIN_TERM_LENGTH || termLength > MAX_TERM_LENGTH || Integer.bitCount(termLength) != 1)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + "=" + termLength + " must be a power of two in [" +
                MIN_TERM_LENGTH + ", " + MAX_TERM_LENGTH + "]");
        }
    }

    /**
     * Check one region a peer granted: exactly {@code expectedLength} bytes ({@code why} says where that length comes
     * from) at a non-zero, aligned address, not wrapping the address space. Any rkey is the peer's to choose.
     */
    private static void validateRegion(final String name, final RemoteRegionFlyweight region,
        final long expectedLength, final int alignment, final String why) throws HandshakeException
    {
        final long length = region.length();
        if (length != expectedLength)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + ".length=" + length + " but must be " + expectedLength +
                why);
        }
        validateRemoteRange(name + ".address", region.address(), length, alignment);
    }

    /** A remote range must be non-null, aligned, and must not wrap the 64-bit address space. */
    public static void validateRemoteRange(final String name, final long address, final long length,
        final int alignment) throws HandshakeException
    {
        if (0 == address || 0 != (address & (alignment - 1)))
        {
            throw new HandshakeException(OUT_OF_RANGE, name + "=0x" + Long.toHexString(address) +
                " must be non-zero and " + alignment + "-byte aligned");
        }
        if (length <= 0 || Long.compareUnsigned(address + length, address) <= 0)
        {
            throw new HandshakeException(OUT_OF_RANGE, name + "=0x" + Long.toHexString(address) + " + " + length +
                " wraps the address space");
        }
    }
}
