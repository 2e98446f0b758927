package io.verbus.fabric.tcp;

/**
 * Frames the tcp software NIC exchanges, little-endian. Each RC QP dials one connection to its peer's NIC;
 * requests flow on it from the requester, responses flow back on the same connection, in order.
 * <p>
 * Responses are cumulative, as RC acknowledgements are: a response naming sequence {@code s} also says that every
 * request before {@code s} succeeded. So the responder answers at once only what the requester is waiting for (a
 * signaled WR, a READ or atomic, an error, an RNR) and acknowledges the unsignaled rest in one {@link #TYPE_ACK}
 * now and then, keeping a write system call off the path of every unsignaled WRITE.
 */
final class TcpWire
{
    static final int MAGIC = 0x56425443; // "VBTC"
    /**
     * 3: cumulative acknowledgements and the 40-byte request header (the tcp-fast engine), and the responder answers
     * the hello, the dialer sending nothing else before that answer. (2 was either one of these alone.)
     * 4: requests carry the requester's RNR budget and the responder ends an RNR wait (NAK RNR_RETRY_EXC_ERR).
     * 5: the hello carries both QPs' PSNs and is accepted only when all four fields match the QP's connection.
     */
    static final int VERSION = 5;

    // Hello, first bytes of a dialed connection: who is calling which QP, and proof that the caller took part in
    // the handshake that connected the two. QPNs are sequential and guessable, so they only address; the two
    // 24-bit starting PSNs are random and travel only inside the handshake the layer above authenticates (the rdma
    // media's HMAC-checked CONNECT/ACCEPT), so they are what a third party who can merely reach the port lacks.
    // The responder accepts a hello only when the target QP exists, its own PSN is the target PSN, and it already
    // holds its remote connection info (RTR) whose QPN and PSN are the source's; until it holds that info the
    // connection waits, up to the connect timeout. A refused hello closes only its own connection, never the QP's.
    // The responder answers with the same frame, targets and sources swapped, which the dialer checks the same way:
    // proof that the Verbus NIC with that QP is at the other end. Until it arrives the dialer transmits nothing, so
    // a peer that points this NIC at some other service gets the hello's bytes and no data.
    // Not confidential: an observer of the plaintext handshake (or of this hello) learns all four values.
    static final int HELLO_MAGIC_OFFSET = 0;
    static final int HELLO_VERSION_OFFSET = 4;
    /** Bytes the responder needs to tell a Verbus NIC of this version from anything else. */
    static final int HELLO_PREAMBLE_LENGTH = 8;
    static final int HELLO_TARGET_QPN_OFFSET = 8;
    static final int HELLO_SOURCE_QPN_OFFSET = 12;
    /** int: the target QP's starting PSN as the dialer learnt it from the handshake (its remote info). */
    static final int HELLO_TARGET_PSN_OFFSET = 16;
    /** int: the source (dialing) QP's own starting PSN, which the target learnt from the handshake. */
    static final int HELLO_SOURCE_PSN_OFFSET = 20;
    static final int HELLO_LENGTH = 24;

    // Every frame starts with its total length and type.
    static final int FRAME_LENGTH_OFFSET = 0;
    static final int FRAME_TYPE_OFFSET = 4;
    /** A request: header, then payload (WRITE, WRITE_WITH_IMM, SEND, SEND_WITH_IMM). */
    static final byte TYPE_REQUEST = 1;
    /** The response to one request: its status, READ data or atomic result; all earlier requests succeeded. */
    static final byte TYPE_RESPONSE = 2;
    /** Receiver not ready for this request (no RECV posted); all earlier requests succeeded. */
    static final byte TYPE_RNR_NAK = 3;
    /** Every request up to and including this sequence succeeded. */
    static final byte TYPE_ACK = 4;
    /** {@link #REQUEST_RNR_BUDGET_US_OFFSET} of a requester that retries RNR forever. */
    static final int RNR_BUDGET_INFINITE = -1;

    // Request header; atomics carry two more words.
    static final int REQUEST_OPCODE_OFFSET = 5;
    static final int REQUEST_FLAGS_OFFSET = 6; // short: the send flags
    static final int REQUEST_SEQUENCE_OFFSET = 8;
    static final int REQUEST_REMOTE_ADDRESS_OFFSET = 16;
    static final int REQUEST_RKEY_OFFSET = 24;
    static final int REQUEST_LENGTH_OFFSET = 28;
    static final int REQUEST_IMMEDIATE_OFFSET = 32;
    /**
     * int: how long, in microseconds, the requester retries an RNR-NAKed SEND or WRITE_WITH_IMM (its RNR timeout
     * times its retry count), or {@link #RNR_BUDGET_INFINITE} (any negative value: forever). The responder, which
     * holds the request, is the one that ends the wait: when the budget has passed since it first found no receive,
     * it drops the request and NAKs it RNR_RETRY_EXC_ERR, so a request its requester gave up on is never delivered
     * to a receive posted later.
     */
    static final int REQUEST_RNR_BUDGET_US_OFFSET = 36;
    static final int REQUEST_HEADER_LENGTH = 40;
    static final int REQUEST_COMPARE_ADD_OFFSET = 40;
    static final int REQUEST_SWAP_OFFSET = 48;
    static final int ATOMIC_REQUEST_HEADER_LENGTH = 56;

    // Response, RNR NAK, ACK: header then payload (READ data).
    static final int RESPONSE_STATUS_OFFSET = 5;
    static final int RESPONSE_SEQUENCE_OFFSET = 8;
    static final int RESPONSE_VALUE_OFFSET = 16;
    static final int RESPONSE_HEADER_LENGTH = 24;

    /** Smallest valid frame: nothing shorter is ever sent. */
    static final int MIN_FRAME_LENGTH = RESPONSE_HEADER_LENGTH;

    private TcpWire()
    {
    }
}
