package io.verbus.fabric.tcp;

/**
 * Frames the tcp software NIC exchanges, little-endian. Each RC QP dials one connection to its peer's NIC;
 * requests flow on it from the requester, responses flow back on the same connection, in order.
 */
final class TcpWire
{
    static final int MAGIC = 0x56425443; // "VBTC"
    /** 2: the responder answers the hello, and the dialer sends nothing else before that answer. */
    static final int VERSION = 2;

    // Hello, first bytes of a dialed connection: who is calling which QP. The responder answers with the same
    // frame, target and source swapped: proof that a Verbus NIC with that QP is at the other end. Until it arrives
    // the dialer transmits nothing, so a peer that points this NIC at some other service gets 16 bytes, no data.
    static final int HELLO_MAGIC_OFFSET = 0;
    static final int HELLO_VERSION_OFFSET = 4;
    static final int HELLO_TARGET_QPN_OFFSET = 8;
    static final int HELLO_SOURCE_QPN_OFFSET = 12;
    static final int HELLO_LENGTH = 16;

    // Every frame starts with its total length and type.
    static final int FRAME_LENGTH_OFFSET = 0;
    static final int FRAME_TYPE_OFFSET = 4;
    static final byte TYPE_REQUEST = 1;
    static final byte TYPE_RESPONSE = 2;
    static final byte TYPE_RNR_NAK = 3;

    // Request: header then payload (WRITE, WRITE_WITH_IMM, SEND, SEND_WITH_IMM).
    static final int REQUEST_OPCODE_OFFSET = 5;
    static final int REQUEST_SEQUENCE_OFFSET = 8;
    static final int REQUEST_REMOTE_ADDRESS_OFFSET = 16;
    static final int REQUEST_RKEY_OFFSET = 24;
    static final int REQUEST_LENGTH_OFFSET = 28;
    static final int REQUEST_IMMEDIATE_OFFSET = 32;
    static final int REQUEST_FLAGS_OFFSET = 36;
    static final int REQUEST_COMPARE_ADD_OFFSET = 40;
    static final int REQUEST_SWAP_OFFSET = 48;
    static final int REQUEST_HEADER_LENGTH = 56;

    // Response (ACK or NAK with a status), RNR NAK: header then payload (READ data).
    static final int RESPONSE_STATUS_OFFSET = 5;
    static final int RESPONSE_SEQUENCE_OFFSET = 8;
    static final int RESPONSE_VALUE_OFFSET = 16;
    static final int RESPONSE_HEADER_LENGTH = 24;

    private TcpWire()
    {
    }
}
