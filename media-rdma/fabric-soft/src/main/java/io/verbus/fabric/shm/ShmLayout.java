package io.verbus.fabric.shm;

import io.verbus.fabric.soft.SoftRegionTable;

/**
 * Byte layouts of the files an shm device publishes under {@code <shm dir>/dev-<gid hex>/}. Every field that
 * another process reads is written with release and read with acquire; each hot word has its own cache line.
 */
final class ShmLayout
{
    static final int MAGIC = 0x56424653; // "VBFS"
    static final int VERSION = 1;
    static final int CACHE_LINE = 64;

    // control: liveness of the device's process.
    static final String CONTROL_FILE = "control";
    static final int CONTROL_MAGIC_OFFSET = 0;
    static final int CONTROL_VERSION_OFFSET = 4;
    static final int CONTROL_PID_OFFSET = 8;
    static final int CONTROL_HEARTBEAT_NS_OFFSET = CACHE_LINE;
    static final int CONTROL_STATE_OFFSET = 2 * CACHE_LINE;
    static final int CONTROL_LENGTH = 4096;
    static final int DEVICE_ALIVE = 1;
    static final int DEVICE_CLOSED = 2;

    // regions: one entry per key index, what a peer checks before touching a region.
    static final String REGIONS_FILE = "regions";
    static final int ENTRY_KEY_OFFSET = 0;
    static final int ENTRY_STATE_OFFSET = 4;
    static final int ENTRY_PD_OFFSET = 8;
    static final int ENTRY_ACCESS_OFFSET = 12;
    static final int ENTRY_ADDRESS_OFFSET = 16;
    static final int ENTRY_LENGTH_OFFSET = 24;
    static final int ENTRY_FILE_OFFSET_OFFSET = 32;
    static final int ENTRY_PATH_LENGTH_OFFSET = 40;
    static final int ENTRY_PATH_OFFSET = 48;
    static final int ENTRY_LENGTH = 512;
    static final int ENTRY_MAX_PATH_BYTES = ENTRY_LENGTH - ENTRY_PATH_OFFSET;
    static final int ENTRY_FREE = 0;
    static final int ENTRY_VALID = 1;
    static final int ENTRY_REVOKED = 2;
    static final long REGIONS_LENGTH = (long)SoftRegionTable.MAX_REGIONS * ENTRY_LENGTH;

    // qp-<qpn>: state, the posted-RECV lengths and the slots a peer's SEND / WRITE_WITH_IMM lands in.
    static final String QP_FILE_PREFIX = "qp-";
    static final int QP_STATE_OFFSET = 0;
    static final int QP_PD_OFFSET = 4;
    static final int QP_RQ_DEPTH_OFFSET = 8;
    static final int QP_SLOT_CAPACITY_OFFSET = 12;
    /** The n of the SRQ file {@code srq-<n>} the QP takes its receives from, 0 for its own receive queue. */
    static final int QP_SRQ_OFFSET = 16;
    /** Deposits the QP has consumed (release): with an SRQ, the initiator's bound on the deposit slots it reuses. */
    static final int QP_CONSUMED_OFFSET = 3 * CACHE_LINE;
    static final int QP_RECV_POSTED_OFFSET = CACHE_LINE;
    static final int QP_DEPOSITED_OFFSET = 2 * CACHE_LINE;
    static final int QP_RECV_LENGTHS_OFFSET = 4 * CACHE_LINE;
    /** Value of the state word once the QP is destroyed: peers get RETRY_EXC_ERR, as from a vanished QP. */
    static final int QP_DESTROYED = 99;

    static final int SLOT_STATUS_OFFSET = 0;
    static final int SLOT_OPCODE_OFFSET = 4;
    static final int SLOT_LENGTH_OFFSET = 8;
    static final int SLOT_IMMEDIATE_OFFSET = 12;
    static final int SLOT_HAS_IMMEDIATE_OFFSET = 16;
    static final int SLOT_SOLICITED_OFFSET = 20;
    /** With an SRQ: the descriptor of the SRQ receive the initiator claimed for this deposit. */
    static final int SLOT_SRQ_INDEX_OFFSET = 24;
    static final int SLOT_HEADER_LENGTH = CACHE_LINE;
    static final int SLOT_STATUS_OK = 0;
    static final int SLOT_STATUS_LENGTH_ERROR = 1;
    /** The claimed SRQ receive is given back as WR_FLUSH_ERR: the WR that claimed it failed at the responder. */
    static final int SLOT_STATUS_FLUSH = 2;

    // srq-<n>: the claim header of an SRQ (SoftSharedReceiveQueue's layout).
    static final String SRQ_FILE_PREFIX = "srq-";

    private ShmLayout()
    {
    }

    static long qpHeaderLength(final int rqDepth)
    {
        return ShmFiles.roundUp(QP_RECV_LENGTHS_OFFSET + 4L * rqDepth, 4096);
    }

    static long qpSlotLength(final int slotCapacity)
    {
        return SLOT_HEADER_LENGTH + ShmFiles.roundUp(slotCapacity, CACHE_LINE);
    }

    static long qpFileLength(final int rqDepth, final int slotCapacity)
    {
        return qpHeaderLength(rqDepth) + rqDepth * qpSlotLength(slotCapacity);
    }
}
