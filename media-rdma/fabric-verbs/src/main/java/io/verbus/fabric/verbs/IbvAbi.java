package io.verbus.fabric.verbs;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.util.List;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The C ABI of the libibverbs structs this binding touches (x86-64, rdma-core 44 headers), as
 * {@link MemoryLayout}s named exactly like the C structs and fields.
 * <p>
 * Only the fields Verbus reads or writes carry names; the rest is padding, so the layouts say what the
 * code depends on. {@code VerbsAbiTest} compiles {@code src/test/c/verbs_abi.c} against the installed
 * headers and requires every named field and every struct size here to equal the C compiler's answer,
 * and every {@code IBV_*} constant in {@link IbvConstants} to equal the header's enum value.
 * <p>
 * The offset constants are derived from the layouts, so a layout fix moves every user with it.
 */
public final class IbvAbi
{
    private IbvAbi()
    {
    }

    static long offset(final GroupLayout layout, final String... path)
    {
        final PathElement[] elements = new PathElement[path.length];
        for (int i = 0; i < path.length; i++)
        {
            elements[i] = PathElement.groupElement(path[i]);
        }
        return layout.byteOffset(elements);
    }

    /** {@code union ibv_gid}: 16 bytes, 8-byte aligned because of its {@code global} view. */
    static MemoryLayout gid(final String name)
    {
        return unionLayout(
            sequenceLayout(16, JAVA_BYTE).withName("raw"),
            structLayout(
                JAVA_LONG.withName("subnet_prefix"),
                JAVA_LONG.withName("interface_id")).withName("global")).withName(name);
    }

    /** {@code struct ibv_context_ops}: the provider's function table, where the inline verbs dispatch. */
    public static final class ContextOps
    {
        public static final StructLayout LAYOUT = structLayout(
            paddingLayout(88),
            ADDRESS.withName("poll_cq"),
            ADDRESS.withName("req_notify_cq"),
            paddingLayout(56),
            ADDRESS.withName("post_srq_recv"),
            paddingLayout(32),
            ADDRESS.withName("post_send"),
            ADDRESS.withName("post_recv"),
            paddingLayout(40)).withName("ibv_context_ops");
        public static final long POLL_CQ = offset(LAYOUT, "poll_cq");
        public static final long REQ_NOTIFY_CQ = offset(LAYOUT, "req_notify_cq");
        public static final long POST_SRQ_RECV = offset(LAYOUT, "post_srq_recv");
        public static final long POST_SEND = offset(LAYOUT, "post_send");
        public static final long POST_RECV = offset(LAYOUT, "post_recv");

        private ContextOps()
        {
        }
    }

    /** {@code struct ibv_context}. */
    public static final class Context
    {
        public static final StructLayout LAYOUT = structLayout(
            ADDRESS.withName("device"),
            ContextOps.LAYOUT.withName("ops"),
            paddingLayout(4),
            JAVA_INT.withName("async_fd"),
            JAVA_INT.withName("num_comp_vectors"),
            paddingLayout(52)).withName("ibv_context");
        public static final long OPS = offset(LAYOUT, "ops");
        public static final long ASYNC_FD = offset(LAYOUT, "async_fd");

        private Context()
        {
        }
    }

    /** {@code struct ibv_device_attr}, filled by {@code ibv_query_device}. */
    public static final class DeviceAttr
    {
        public static final StructLayout LAYOUT = structLayout(
            sequenceLayout(64, JAVA_BYTE).withName("fw_ver"),
            paddingLayout(16),
            JAVA_LONG.withName("max_mr_size"),
            paddingLayout(8),
            JAVA_INT.withName("vendor_id"),
            JAVA_INT.withName("vendor_part_id"),
            paddingLayout(4),
            JAVA_INT.withName("max_qp"),
            JAVA_INT.withName("max_qp_wr"),
            paddingLayout(4),
            JAVA_INT.withName("max_sge"),
            paddingLayout(8),
            JAVA_INT.withName("max_cqe"),
            JAVA_INT.withName("max_mr"),
            paddingLayout(4),
            JAVA_INT.withName("max_qp_rd_atom"),
            paddingLayout(8),
            JAVA_INT.withName("max_qp_init_rd_atom"),
            paddingLayout(4),
            JAVA_INT.withName("atomic_cap"),
            paddingLayout(59),
            JAVA_BYTE.withName("phys_port_cnt"),
            paddingLayout(4)).withName("ibv_device_attr");
        public static final long FW_VER = offset(LAYOUT, "fw_ver");
        public static final long MAX_MR_SIZE = offset(LAYOUT, "max_mr_size");
        public static final long VENDOR_ID = offset(LAYOUT, "vendor_id");
        public static final long VENDOR_PART_ID = offset(LAYOUT, "vendor_part_id");
        public static final long MAX_QP = offset(LAYOUT, "max_qp");
        public static final long MAX_QP_WR = offset(LAYOUT, "max_qp_wr");
        public static final long MAX_SGE = offset(LAYOUT, "max_sge");
        public static final long MAX_CQE = offset(LAYOUT, "max_cqe");
        public static final long MAX_MR = offset(LAYOUT, "max_mr");
        public static final long MAX_QP_RD_ATOM = offset(LAYOUT, "max_qp_rd_atom");
        public static final long MAX_QP_INIT_RD_ATOM = offset(LAYOUT, "max_qp_init_rd_atom");
        public static final long ATOMIC_CAP = offset(LAYOUT, "atomic_cap");
        public static final long PHYS_PORT_CNT = offset(LAYOUT, "phys_port_cnt");

        private DeviceAttr()
        {
        }
    }

    /**
     * {@code struct ibv_port_attr}, filled through the exported compat {@code ibv_query_port} (the header's
     * {@code ibv_query_port} is a macro); the whole struct is allocated and zeroed before each query.
     */
    public static final class PortAttr
    {
        public static final StructLayout LAYOUT = structLayout(
            JAVA_INT.withName("state"),
            JAVA_INT.withName("max_mtu"),
            JAVA_INT.withName("active_mtu"),
            JAVA_INT.withName("gid_tbl_len"),
            JAVA_INT.withName("port_cap_flags"),
            JAVA_INT.withName("max_msg_sz"),
            paddingLayout(10),
            JAVA_SHORT.withName("lid"),
            JAVA_SHORT.withName("sm_lid"),
            paddingLayout(5),
            JAVA_BYTE.withName("active_width"),
            JAVA_BYTE.withName("active_speed"),
            JAVA_BYTE.withName("phys_state"),
            JAVA_BYTE.withName("link_layer"),
            JAVA_BYTE.withName("flags"),
            paddingLayout(4)).withName("ibv_port_attr");
        public static final long STATE = offset(LAYOUT, "state");
        public static final long MAX_MTU = offset(LAYOUT, "max_mtu");
        public static final long ACTIVE_MTU = offset(LAYOUT, "active_mtu");
        public static final long GID_TBL_LEN = offset(LAYOUT, "gid_tbl_len");
        public static final long MAX_MSG_SZ = offset(LAYOUT, "max_msg_sz");
        public static final long LID = offset(LAYOUT, "lid");
        public static final long LINK_LAYER = offset(LAYOUT, "link_layer");

        private PortAttr()
        {
        }
    }

    /** {@code struct ibv_gid_entry}, filled by the exported {@code _ibv_query_gid_ex}. */
    public static final class GidEntry
    {
        public static final StructLayout LAYOUT = structLayout(
            gid("gid"),
            JAVA_INT.withName("gid_index"),
            JAVA_INT.withName("port_num"),
            JAVA_INT.withName("gid_type"),
            JAVA_INT.withName("ndev_ifindex")).withName("ibv_gid_entry");
        public static final long GID = offset(LAYOUT, "gid");
        public static final long GID_INDEX = offset(LAYOUT, "gid_index");
        public static final long GID_TYPE = offset(LAYOUT, "gid_type");
        public static final long NDEV_IFINDEX = offset(LAYOUT, "ndev_ifindex");

        private GidEntry()
        {
        }
    }

    /** {@code struct ibv_mr}: the keys are read once after {@code ibv_reg_mr}. */
    public static final class Mr
    {
        public static final StructLayout LAYOUT = structLayout(
            ADDRESS.withName("context"),
            ADDRESS.withName("pd"),
            ADDRESS.withName("addr"),
            JAVA_LONG.withName("length"),
            JAVA_INT.withName("handle"),
            JAVA_INT.withName("lkey"),
            JAVA_INT.withName("rkey"),
            paddingLayout(4)).withName("ibv_mr");
        public static final long ADDR = offset(LAYOUT, "addr");
        public static final long LENGTH = offset(LAYOUT, "length");
        public static final long LKEY = offset(LAYOUT, "lkey");
        public static final long RKEY = offset(LAYOUT, "rkey");

        private Mr()
        {
        }
    }

    /** {@code struct ibv_cq}: {@code cqe} is the depth the provider actually granted. */
    public static final class Cq
    {
        public static final StructLayout LAYOUT = structLayout(
            ADDRESS.withName("context"),
            paddingLayout(20),
            JAVA_INT.withName("cqe"),
            paddingLayout(96)).withName("ibv_cq");
        public static final long CQE = offset(LAYOUT, "cqe");

        private Cq()
        {
        }
    }

    /** {@code struct ibv_qp_cap}, inside both {@code ibv_qp_init_attr} and {@code ibv_qp_attr}. */
    public static final class QpCap
    {
        public static final StructLayout LAYOUT = structLayout(
            JAVA_INT.withName("max_send_wr"),
            JAVA_INT.withName("max_recv_wr"),
            JAVA_INT.withName("max_send_sge"),
            JAVA_INT.withName("max_recv_sge"),
            JAVA_INT.withName("max_inline_data")).withName("ibv_qp_cap");
        public static final long MAX_SEND_WR = offset(LAYOUT, "max_send_wr");
        public static final long MAX_RECV_WR = offset(LAYOUT, "max_recv_wr");
        public static final long MAX_SEND_SGE = offset(LAYOUT, "max_send_sge");
        public static final long MAX_RECV_SGE = offset(LAYOUT, "max_recv_sge");
        public static final long MAX_INLINE_DATA = offset(LAYOUT, "max_inline_data");

        private QpCap()
        {
        }
    }

    /** {@code struct ibv_qp_init_attr} for {@code ibv_create_qp} and {@code ibv_query_qp}. */
    public static final class QpInitAttr
    {
        public static final StructLayout LAYOUT = structLayout(
            ADDRESS.withName("qp_context"),
            ADDRESS.withName("send_cq"),
            ADDRESS.withName("recv_cq"),
            ADDRESS.withName("srq"),
            QpCap.LAYOUT.withName("cap"),
            JAVA_INT.withName("qp_type"),
            JAVA_INT.withName("sq_sig_all"),
            paddingLayout(4)).withName("ibv_qp_init_attr");
        public static final long SEND_CQ = offset(LAYOUT, "send_cq");
        public static final long RECV_CQ = offset(LAYOUT, "recv_cq");
        public static final long SRQ = offset(LAYOUT, "srq");
        public static final long CAP = offset(LAYOUT, "cap");
        public static final long QP_TYPE = offset(LAYOUT, "qp_type");
        public static final long SQ_SIG_ALL = offset(LAYOUT, "sq_sig_all");

        private QpInitAttr()
        {
        }
    }

    /** {@code struct ibv_qp}: the number and the state the library keeps. */
    public static final class Qp
    {
        public static final StructLayout LAYOUT = structLayout(
            ADDRESS.withName("context"),
            paddingLayout(8),
            ADDRESS.withName("pd"),
            ADDRESS.withName("send_cq"),
            ADDRESS.withName("recv_cq"),
            paddingLayout(8),
            JAVA_INT.withName("handle"),
            JAVA_INT.withName("qp_num"),
            JAVA_INT.withName("state"),
            JAVA_INT.withName("qp_type"),
            paddingLayout(96)).withName("ibv_qp");
        public static final long QP_NUM = offset(LAYOUT, "qp_num");
        public static final long STATE = offset(LAYOUT, "state");

        private Qp()
        {
        }
    }

    /** {@code struct ibv_global_route}: the GRH a RoCE (or routed InfiniBand) path needs. */
    public static final class GlobalRoute
    {
        public static final StructLayout LAYOUT = structLayout(
            gid("dgid"),
            JAVA_INT.withName("flow_label"),
            JAVA_BYTE.withName("sgid_index"),
            JAVA_BYTE.withName("hop_limit"),
            JAVA_BYTE.withName("traffic_class"),
            paddingLayout(1)).withName("ibv_global_route");

        private GlobalRoute()
        {
        }
    }

    /** {@code struct ibv_ah_attr}: the address vector of the remote port. */
    public static final class AhAttr
    {
        public static final StructLayout LAYOUT = structLayout(
            GlobalRoute.LAYOUT.withName("grh"),
            JAVA_SHORT.withName("dlid"),
            JAVA_BYTE.withName("sl"),
            JAVA_BYTE.withName("src_path_bits"),
            JAVA_BYTE.withName("static_rate"),
            JAVA_BYTE.withName("is_global"),
            JAVA_BYTE.withName("port_num"),
            paddingLayout(1)).withName("ibv_ah_attr");

        private AhAttr()
        {
        }
    }

    /** {@code struct ibv_qp_attr} for {@code ibv_modify_qp}: the INIT, RTR and RTS transitions. */
    public static final class QpAttr
    {
        public static final StructLayout LAYOUT = structLayout(
            JAVA_INT.withName("qp_state"),
            JAVA_INT.withName("cur_qp_state"),
            JAVA_INT.withName("path_mtu"),
            paddingLayout(4),
            JAVA_INT.withName("qkey"),
            JAVA_INT.withName("rq_psn"),
            JAVA_INT.withName("sq_psn"),
            JAVA_INT.withName("dest_qp_num"),
            JAVA_INT.withName("qp_access_flags"),
            QpCap.LAYOUT.withName("cap"),
            AhAttr.LAYOUT.withName("ah_attr"),
            paddingLayout(32),
            JAVA_SHORT.withName("pkey_index"),
            paddingLayout(4),
            JAVA_BYTE.withName("max_rd_atomic"),
            JAVA_BYTE.withName("max_dest_rd_atomic"),
            JAVA_BYTE.withName("min_rnr_timer"),
            JAVA_BYTE.withName("port_num"),
            JAVA_BYTE.withName("timeout"),
            JAVA_BYTE.withName("retry_cnt"),
            JAVA_BYTE.withName("rnr_retry"),
            paddingLayout(11)).withName("ibv_qp_attr");
        public static final long QP_STATE = offset(LAYOUT, "qp_state");
        public static final long CUR_QP_STATE = offset(LAYOUT, "cur_qp_state");
        public static final long PATH_MTU = offset(LAYOUT, "path_mtu");
        public static final long RQ_PSN = offset(LAYOUT, "rq_psn");
        public static final long SQ_PSN = offset(LAYOUT, "sq_psn");
        public static final long DEST_QP_NUM = offset(LAYOUT, "dest_qp_num");
        public static final long QP_ACCESS_FLAGS = offset(LAYOUT, "qp_access_flags");
        public static final long CAP = offset(LAYOUT, "cap");
        public static final long AH_DGID = offset(LAYOUT, "ah_attr", "grh", "dgid");
        public static final long AH_FLOW_LABEL = offset(LAYOUT, "ah_attr", "grh", "flow_label");
        public static final long AH_SGID_INDEX = offset(LAYOUT, "ah_attr", "grh", "sgid_index");
        public static final long AH_HOP_LIMIT = offset(LAYOUT, "ah_attr", "grh", "hop_limit");
        public static final long AH_TRAFFIC_CLASS = offset(LAYOUT, "ah_attr", "grh", "traffic_class");
        public static final long AH_DLID = offset(LAYOUT, "ah_attr", "dlid");
        public static final long AH_SL = offset(LAYOUT, "ah_attr", "sl");
        public static final long AH_IS_GLOBAL = offset(LAYOUT, "ah_attr", "is_global");
        public static final long AH_PORT_NUM = offset(LAYOUT, "ah_attr", "port_num");
        public static final long PKEY_INDEX = offset(LAYOUT, "pkey_index");
        public static final long MAX_RD_ATOMIC = offset(LAYOUT, "max_rd_atomic");
        public static final long MAX_DEST_RD_ATOMIC = offset(LAYOUT, "max_dest_rd_atomic");
        public static final long MIN_RNR_TIMER = offset(LAYOUT, "min_rnr_timer");
        public static final long PORT_NUM = offset(LAYOUT, "port_num");
        public static final long TIMEOUT = offset(LAYOUT, "timeout");
        public static final long RETRY_CNT = offset(LAYOUT, "retry_cnt");
        public static final long RNR_RETRY = offset(LAYOUT, "rnr_retry");

        private QpAttr()
        {
        }
    }

    /** {@code struct ibv_sge}: one gather/scatter element. */
    public static final class Sge
    {
        public static final StructLayout LAYOUT = structLayout(
            JAVA_LONG.withName("addr"),
            JAVA_INT.withName("length"),
            JAVA_INT.withName("lkey")).withName("ibv_sge");
        public static final long ADDR = offset(LAYOUT, "addr");
        public static final long LENGTH = offset(LAYOUT, "length");
        public static final long LKEY = offset(LAYOUT, "lkey");

        private Sge()
        {
        }
    }

    /** {@code struct ibv_send_wr}: 128 bytes because of its unions; only the RDMA and atomic views are named. */
    public static final class SendWr
    {
        public static final StructLayout LAYOUT = structLayout(
            JAVA_LONG.withName("wr_id"),
            ADDRESS.withName("next"),
            ADDRESS.withName("sg_list"),
            JAVA_INT.withName("num_sge"),
            JAVA_INT.withName("opcode"),
            JAVA_INT.withName("send_flags"),
            JAVA_INT.withName("imm_data"),
            unionLayout(
                structLayout(
                    JAVA_LONG.withName("remote_addr"),
                    JAVA_INT.withName("rkey"),
                    paddingLayout(4)).withName("rdma"),
                structLayout(
                    JAVA_LONG.withName("remote_addr"),
                    JAVA_LONG.withName("compare_add"),
                    JAVA_LONG.withName("swap"),
                    JAVA_INT.withName("rkey"),
                    paddingLayout(4)).withName("atomic")).withName("wr"),
            paddingLayout(56)).withName("ibv_send_wr");
        public static final long WR_ID = offset(LAYOUT, "wr_id");
        public static final long NEXT = offset(LAYOUT, "next");
        public static final long SG_LIST = offset(LAYOUT, "sg_list");
        public static final long NUM_SGE = offset(LAYOUT, "num_sge");
        public static final long OPCODE = offset(LAYOUT, "opcode");
        public static final long SEND_FLAGS = offset(LAYOUT, "send_flags");
        public static final long IMM_DATA = offset(LAYOUT, "imm_data");
        public static final long RDMA_REMOTE_ADDR = offset(LAYOUT, "wr", "rdma", "remote_addr");
        public static final long RDMA_RKEY = offset(LAYOUT, "wr", "rdma", "rkey");
        public static final long ATOMIC_REMOTE_ADDR = offset(LAYOUT, "wr", "atomic", "remote_addr");
        public static final long ATOMIC_COMPARE_ADD = offset(LAYOUT, "wr", "atomic", "compare_add");
        public static final long ATOMIC_SWAP = offset(LAYOUT, "wr", "atomic", "swap");
        public static final long ATOMIC_RKEY = offset(LAYOUT, "wr", "atomic", "rkey");

        private SendWr()
        {
        }
    }

    /** {@code struct ibv_recv_wr}. */
    public static final class RecvWr
    {
        public static final StructLayout LAYOUT = structLayout(
            JAVA_LONG.withName("wr_id"),
            ADDRESS.withName("next"),
            ADDRESS.withName("sg_list"),
            JAVA_INT.withName("num_sge"),
            paddingLayout(4)).withName("ibv_recv_wr");
        public static final long WR_ID = offset(LAYOUT, "wr_id");
        public static final long NEXT = offset(LAYOUT, "next");
        public static final long SG_LIST = offset(LAYOUT, "sg_list");
        public static final long NUM_SGE = offset(LAYOUT, "num_sge");

        private RecvWr()
        {
        }
    }

    /** {@code struct ibv_wc}: one work completion as {@code ibv_poll_cq} fills it. */
    public static final class Wc
    {
        public static final StructLayout LAYOUT = structLayout(
            JAVA_LONG.withName("wr_id"),
            JAVA_INT.withName("status"),
            JAVA_INT.withName("opcode"),
            JAVA_INT.withName("vendor_err"),
            JAVA_INT.withName("byte_len"),
            JAVA_INT.withName("imm_data"),
            JAVA_INT.withName("qp_num"),
            JAVA_INT.withName("src_qp"),
            JAVA_INT.withName("wc_flags"),
            paddingLayout(8)).withName("ibv_wc");
        public static final long WR_ID = offset(LAYOUT, "wr_id");
        public static final long STATUS = offset(LAYOUT, "status");
        public static final long OPCODE = offset(LAYOUT, "opcode");
        public static final long VENDOR_ERR = offset(LAYOUT, "vendor_err");
        public static final long BYTE_LEN = offset(LAYOUT, "byte_len");
        public static final long IMM_DATA = offset(LAYOUT, "imm_data");
        public static final long QP_NUM = offset(LAYOUT, "qp_num");
        public static final long WC_FLAGS = offset(LAYOUT, "wc_flags");

        private Wc()
        {
        }
    }

    /** {@code struct ibv_async_event}: the element is a QP, CQ or port number depending on the type. */
    public static final class AsyncEvent
    {
        public static final StructLayout LAYOUT = structLayout(
            ADDRESS.withName("element"),
            JAVA_INT.withName("event_type"),
            paddingLayout(4)).withName("ibv_async_event");
        public static final long ELEMENT = offset(LAYOUT, "element");
        public static final long EVENT_TYPE = offset(LAYOUT, "event_type");

        private AsyncEvent()
        {
        }
    }

    /** {@code struct ibv_comp_channel}: the file descriptor that is readable while CQ events are queued. */
    public static final class CompChannel
    {
        public static final StructLayout LAYOUT = structLayout(
            ADDRESS.withName("context"),
            JAVA_INT.withName("fd"),
            JAVA_INT.withName("refcnt")).withName("ibv_comp_channel");
        public static final long FD = offset(LAYOUT, "fd");

        private CompChannel()
        {
        }
    }

    /** {@code struct ibv_srq_init_attr} for {@code ibv_create_srq}, which writes back the depth granted. */
    public static final class SrqInitAttr
    {
        public static final StructLayout LAYOUT = structLayout(
            ADDRESS.withName("srq_context"),
            structLayout(
                JAVA_INT.withName("max_wr"),
                JAVA_INT.withName("max_sge"),
                JAVA_INT.withName("srq_limit")).withName("attr"),
            paddingLayout(4)).withName("ibv_srq_init_attr");
        public static final long MAX_WR = offset(LAYOUT, "attr", "max_wr");
        public static final long MAX_SGE = offset(LAYOUT, "attr", "max_sge");
        public static final long SRQ_LIMIT = offset(LAYOUT, "attr", "srq_limit");

        private SrqInitAttr()
        {
        }
    }

    /**
     * Every struct above, for the ABI test. A method, not a constant: the nested classes initialise on
     * first use and must not wait on this outer class's initialisation.
     *
     * @return the layouts.
     */
    public static List<StructLayout> structs()
    {
        return List.of(
        ContextOps.LAYOUT, Context.LAYOUT, DeviceAttr.LAYOUT, PortAttr.LAYOUT, GidEntry.LAYOUT, Mr.LAYOUT,
        Cq.LAYOUT, QpCap.LAYOUT, QpInitAttr.LAYOUT, Qp.LAYOUT, GlobalRoute.LAYOUT, AhAttr.LAYOUT, QpAttr.LAYOUT,
        Sge.LAYOUT, SendWr.LAYOUT, RecvWr.LAYOUT, Wc.LAYOUT, AsyncEvent.LAYOUT, CompChannel.LAYOUT,
        SrqInitAttr.LAYOUT);
    }
}
