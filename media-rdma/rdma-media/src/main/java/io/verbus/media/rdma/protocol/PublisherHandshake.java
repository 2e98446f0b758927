package io.verbus.media.rdma.protocol;

/**
 * The publisher's side of the control-connection handshake: HELLO in, CHALLENGE out, CONNECT in, ACCEPT out,
 * READY in. Nothing is registered for a subscriber until its CONNECT carried a valid proof and every field
 * passed {@link HandshakeValidator}; if anything fails after that, what was registered is released.
 * <p>
 * One instance per control thread; {@link #run} is called once per connection.
 */
public final class PublisherHandshake
{
    /** What the publication tells a subscriber about its log. */
    public record Shape(int sessionId, int streamId, int initialTermId, int termLength, int mtuLength, int providerId,
        int commitWord)
    {
        /** A counter-mode publication (the CHALLENGE's commit word 0, as before commit modes). */
        public Shape(final int sessionId, final int streamId, final int initialTermId, final int termLength,
            final int mtuLength, final int providerId)
        {
            this(sessionId, streamId, initialTermId, termLength, mtuLength, providerId,
                ChallengeFlyweight.COMMIT_COUNTER);
        }
    }

    /**
     * What an authenticated subscriber offers: its ring, its position block, its QP, and the catch-up it asks for
     * ({@link ConnectFlyweight#CATCH_UP_NONE}, {@link ConnectFlyweight#CATCH_UP_TERM_START} or a position).
     */
    public record SubscriberOffer(
        long ringAddress, long ringLength, int ringRkey, long counterAddress, int counterRkey,
        QpInfoCodec.QpInfo qp, boolean hasGroupTag, long groupTag, String peer, int commit, int receiveCredits,
        long catchUpRequest)
    {
    }

    /**
     * What the publisher registered for that subscriber; the attachment is the media's own state. A granted
     * catch-up starts at {@code catchUpPosition} below the join position and comes with a READ-only registration
     * of the log's terms; otherwise {@code catchUpPosition == joinPosition} and the log fields are 0.
     */
    public record Admission(long statusAddress, int statusRkey, long joinPosition, QpInfoCodec.QpInfo qp,
        Object attachment, long catchUpPosition, long oldestPosition, long logAddress, long logLength, int logRkey)
    {
        /** An admission with no catch-up. */
        public Admission(final long statusAddress, final int statusRkey, final long joinPosition,
            final QpInfoCodec.QpInfo qp, final Object attachment)
        {
            this(statusAddress, statusRkey, joinPosition, qp, attachment, joinPosition, -1, 0, 0, 0);
        }
    }

    /** The media's side: called only with authenticated, validated offers. */
    public interface Resources
    {
        /** Register the status slot, create and connect the QP, pick the join position. */
        Admission admit(SubscriberOffer offer) throws HandshakeException;

        /** Undo {@link #admit} when the handshake fails after it. */
        void release(Admission admission);
    }

    private final Shape shape;
    private final HandshakeSteps steps;

    public PublisherHandshake(final HandshakeAuthenticator authenticator, final Shape shape, final long stepTimeoutMs)
    {
        this.shape = shape;
        this.steps = new HandshakeSteps(authenticator, stepTimeoutMs, "peer");
    }

    /**
     * Run the handshake on one connection.
     *
     * @return the admission, once the subscriber said READY.
     * @throws HandshakeException after sending the peer a REJECT (when the connection still works).
     */
    public Admission run(final MessageTransport transport, final Resources resources) throws HandshakeException
    {
        Admission admission = null;
        try
        {
            steps.receive(transport, HandshakeHeader.HELLO_TYPE);
            final HelloFlyweight hello = steps.hello.wrap(steps.in, 0);
            HandshakeValidator.validateHello(hello, shape.streamId());
            steps.keepHello(steps.in);
            hello.getClientNonce(steps.clientNonce);
            final boolean hasGroupTag = 0 != (hello.flags() & HelloFlyweight.GROUP_TAG_FLAG);
            final long groupTag = hello.groupTag();

            steps.nextNonce(steps.serverNonce);
            steps.challenge.wrap(steps.out, 0).writeHeader()
                .sessionId(shape.sessionId())
                .streamId(shape.streamId())
                .initialTermId(shape.initialTermId())
                .termLength(shape.termLength())
                .mtuLength(shape.mtuLength())
                .providerId(shape.providerId())
                .commit(shape.commitWord())
                .serverNonce(steps.serverNonce);
            steps.signAndSend(transport, HandshakeHeader.CHALLENGE_TYPE);

            steps.receiveSigned(transport, HandshakeHeader.CONNECT_TYPE);
            final ConnectFlyweight connect = steps.connect.wrap(steps.in, 0);
            final QpInfoCodec.QpInfo subscriberQp = new QpInfoCodec.QpInfo();
            HandshakeValidator.validateConnect(connect, shape.termLength(), subscriberQp);
            final int ownCommit = shape.commitWord() & ~ChallengeFlyweight.COMMIT_AUTO_PREFERS_IMM_FLAG;
            if (ChallengeFlyweight.COMMIT_AUTO != ownCommit && connect.commit() != ownCommit)
            {
                throw new HandshakeException(HandshakeException.Reason.COMMIT_MISMATCH, "the subscriber agreed to " +
                    "commit=" + ChallengeFlyweight.commitName(connect.commit()) + " but this publication requires " +
                    "commit=" + ChallengeFlyweight.commitName(ownCommit));
            }

            final RemoteRegionFlyweight ring = connect.ring();
            final RemoteRegionFlyweight counter = connect.counter();
            admission = resources.admit(new SubscriberOffer(
                ring.address(), ring.length(), ring.rkey(), counter.address(), counter.rkey(), subscriberQp,
                hasGroupTag, groupTag, transport.peer(), connect.commit(), connect.receiveCredits(),
                connect.catchUpPosition()));

            final AcceptFlyweight accept = steps.accept.wrap(steps.out, 0).writeHeader()
                .joinPosition(admission.joinPosition())
                .qpInfo(admission.qp())
                .catchUpPosition(admission.catchUpPosition())
                .oldestPosition(admission.oldestPosition());
            accept.status().set(admission.statusAddress(), SlotLayout.BLOCK_LENGTH, admission.statusRkey());
            accept.log().set(admission.logAddress(), admission.logLength(), admission.logRkey());
            steps.signAndSend(transport, HandshakeHeader.ACCEPT_TYPE);

            steps.receive(transport, HandshakeHeader.READY_TYPE);
            return admission;
        }
        catch (final HandshakeException | RuntimeException ex)
        {
            if (null != admission)
            {
                resources.release(admission);
            }
            throw steps.fail(transport, ex, "admission failed: ");
        }
    }
}
