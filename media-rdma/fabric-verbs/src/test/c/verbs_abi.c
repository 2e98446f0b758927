/*
 * Prints the C ABI of every libibverbs struct, field and ops-table slot that the Java binding
 * (io.verbus.fabric.verbs.IbvAbi) reads or writes, one "name value" pair per line:
 *   sizeof <struct> <bytes>
 *   offsetof <struct>.<field> <bytes>
 *   const <IBV_NAME> <value>
 * VerbsAbiTest compiles this file against the installed rdma-core headers and compares every line
 * with the Java MemoryLayouts, so a header change that moves a field fails the build instead of
 * corrupting memory at run time.
 */
#include <stddef.h>
#include <stdio.h>
#include <infiniband/verbs.h>

#define SIZE(type) printf("sizeof %s %zu\n", #type, sizeof(struct type))
#define OFF(type, field) printf("offsetof %s.%s %zu\n", #type, #field, offsetof(struct type, field))
#define CONST(name) printf("const %s %lld\n", #name, (long long) (name))

int main(void)
{
    SIZE(ibv_context_ops);
    OFF(ibv_context_ops, poll_cq);
    OFF(ibv_context_ops, req_notify_cq);
    OFF(ibv_context_ops, post_srq_recv);
    OFF(ibv_context_ops, post_send);
    OFF(ibv_context_ops, post_recv);

    SIZE(ibv_context);
    OFF(ibv_context, device);
    OFF(ibv_context, ops.poll_cq);
    OFF(ibv_context, ops.req_notify_cq);
    OFF(ibv_context, ops.post_srq_recv);
    OFF(ibv_context, ops.post_send);
    OFF(ibv_context, ops.post_recv);
    OFF(ibv_context, async_fd);
    OFF(ibv_context, num_comp_vectors);

    SIZE(ibv_device_attr);
    OFF(ibv_device_attr, fw_ver);
    OFF(ibv_device_attr, max_mr_size);
    OFF(ibv_device_attr, vendor_id);
    OFF(ibv_device_attr, vendor_part_id);
    OFF(ibv_device_attr, max_qp);
    OFF(ibv_device_attr, max_qp_wr);
    OFF(ibv_device_attr, max_sge);
    OFF(ibv_device_attr, max_cqe);
    OFF(ibv_device_attr, max_mr);
    OFF(ibv_device_attr, max_qp_rd_atom);
    OFF(ibv_device_attr, max_qp_init_rd_atom);
    OFF(ibv_device_attr, atomic_cap);
    OFF(ibv_device_attr, phys_port_cnt);

    SIZE(ibv_port_attr);
    OFF(ibv_port_attr, state);
    OFF(ibv_port_attr, max_mtu);
    OFF(ibv_port_attr, active_mtu);
    OFF(ibv_port_attr, gid_tbl_len);
    OFF(ibv_port_attr, port_cap_flags);
    OFF(ibv_port_attr, max_msg_sz);
    OFF(ibv_port_attr, lid);
    OFF(ibv_port_attr, sm_lid);
    OFF(ibv_port_attr, active_width);
    OFF(ibv_port_attr, active_speed);
    OFF(ibv_port_attr, phys_state);
    OFF(ibv_port_attr, link_layer);
    OFF(ibv_port_attr, flags);

    SIZE(ibv_gid_entry);
    OFF(ibv_gid_entry, gid.raw);
    OFF(ibv_gid_entry, gid.global.subnet_prefix);
    OFF(ibv_gid_entry, gid.global.interface_id);
    OFF(ibv_gid_entry, gid_index);
    OFF(ibv_gid_entry, port_num);
    OFF(ibv_gid_entry, gid_type);
    OFF(ibv_gid_entry, ndev_ifindex);

    SIZE(ibv_mr);
    OFF(ibv_mr, context);
    OFF(ibv_mr, pd);
    OFF(ibv_mr, addr);
    OFF(ibv_mr, length);
    OFF(ibv_mr, handle);
    OFF(ibv_mr, lkey);
    OFF(ibv_mr, rkey);

    SIZE(ibv_cq);
    OFF(ibv_cq, context);
    OFF(ibv_cq, cqe);

    SIZE(ibv_qp_cap);
    OFF(ibv_qp_cap, max_send_wr);
    OFF(ibv_qp_cap, max_recv_wr);
    OFF(ibv_qp_cap, max_send_sge);
    OFF(ibv_qp_cap, max_recv_sge);
    OFF(ibv_qp_cap, max_inline_data);

    SIZE(ibv_qp_init_attr);
    OFF(ibv_qp_init_attr, qp_context);
    OFF(ibv_qp_init_attr, send_cq);
    OFF(ibv_qp_init_attr, recv_cq);
    OFF(ibv_qp_init_attr, srq);
    OFF(ibv_qp_init_attr, cap.max_send_wr);
    OFF(ibv_qp_init_attr, cap.max_recv_wr);
    OFF(ibv_qp_init_attr, cap.max_send_sge);
    OFF(ibv_qp_init_attr, cap.max_recv_sge);
    OFF(ibv_qp_init_attr, cap.max_inline_data);
    OFF(ibv_qp_init_attr, qp_type);
    OFF(ibv_qp_init_attr, sq_sig_all);

    SIZE(ibv_qp);
    OFF(ibv_qp, context);
    OFF(ibv_qp, pd);
    OFF(ibv_qp, send_cq);
    OFF(ibv_qp, recv_cq);
    OFF(ibv_qp, handle);
    OFF(ibv_qp, qp_num);
    OFF(ibv_qp, state);
    OFF(ibv_qp, qp_type);

    SIZE(ibv_global_route);
    OFF(ibv_global_route, dgid.raw);
    OFF(ibv_global_route, dgid.global.subnet_prefix);
    OFF(ibv_global_route, dgid.global.interface_id);
    OFF(ibv_global_route, flow_label);
    OFF(ibv_global_route, sgid_index);
    OFF(ibv_global_route, hop_limit);
    OFF(ibv_global_route, traffic_class);

    SIZE(ibv_ah_attr);
    OFF(ibv_ah_attr, grh.dgid.raw);
    OFF(ibv_ah_attr, grh.dgid.global.subnet_prefix);
    OFF(ibv_ah_attr, grh.dgid.global.interface_id);
    OFF(ibv_ah_attr, grh.flow_label);
    OFF(ibv_ah_attr, grh.sgid_index);
    OFF(ibv_ah_attr, grh.hop_limit);
    OFF(ibv_ah_attr, grh.traffic_class);
    OFF(ibv_ah_attr, dlid);
    OFF(ibv_ah_attr, sl);
    OFF(ibv_ah_attr, src_path_bits);
    OFF(ibv_ah_attr, static_rate);
    OFF(ibv_ah_attr, is_global);
    OFF(ibv_ah_attr, port_num);

    SIZE(ibv_qp_attr);
    OFF(ibv_qp_attr, qp_state);
    OFF(ibv_qp_attr, cur_qp_state);
    OFF(ibv_qp_attr, path_mtu);
    OFF(ibv_qp_attr, qkey);
    OFF(ibv_qp_attr, rq_psn);
    OFF(ibv_qp_attr, sq_psn);
    OFF(ibv_qp_attr, dest_qp_num);
    OFF(ibv_qp_attr, qp_access_flags);
    OFF(ibv_qp_attr, cap.max_send_wr);
    OFF(ibv_qp_attr, cap.max_recv_wr);
    OFF(ibv_qp_attr, cap.max_send_sge);
    OFF(ibv_qp_attr, cap.max_recv_sge);
    OFF(ibv_qp_attr, cap.max_inline_data);
    OFF(ibv_qp_attr, ah_attr.grh.dgid.raw);
    OFF(ibv_qp_attr, ah_attr.grh.dgid.global.subnet_prefix);
    OFF(ibv_qp_attr, ah_attr.grh.dgid.global.interface_id);
    OFF(ibv_qp_attr, ah_attr.grh.flow_label);
    OFF(ibv_qp_attr, ah_attr.grh.sgid_index);
    OFF(ibv_qp_attr, ah_attr.grh.hop_limit);
    OFF(ibv_qp_attr, ah_attr.grh.traffic_class);
    OFF(ibv_qp_attr, ah_attr.dlid);
    OFF(ibv_qp_attr, ah_attr.sl);
    OFF(ibv_qp_attr, ah_attr.src_path_bits);
    OFF(ibv_qp_attr, ah_attr.static_rate);
    OFF(ibv_qp_attr, ah_attr.is_global);
    OFF(ibv_qp_attr, ah_attr.port_num);
    OFF(ibv_qp_attr, pkey_index);
    OFF(ibv_qp_attr, max_rd_atomic);
    OFF(ibv_qp_attr, max_dest_rd_atomic);
    OFF(ibv_qp_attr, min_rnr_timer);
    OFF(ibv_qp_attr, port_num);
    OFF(ibv_qp_attr, timeout);
    OFF(ibv_qp_attr, retry_cnt);
    OFF(ibv_qp_attr, rnr_retry);

    SIZE(ibv_sge);
    OFF(ibv_sge, addr);
    OFF(ibv_sge, length);
    OFF(ibv_sge, lkey);

    SIZE(ibv_send_wr);
    OFF(ibv_send_wr, wr_id);
    OFF(ibv_send_wr, next);
    OFF(ibv_send_wr, sg_list);
    OFF(ibv_send_wr, num_sge);
    OFF(ibv_send_wr, opcode);
    OFF(ibv_send_wr, send_flags);
    OFF(ibv_send_wr, imm_data);
    OFF(ibv_send_wr, wr.rdma.remote_addr);
    OFF(ibv_send_wr, wr.rdma.rkey);
    OFF(ibv_send_wr, wr.atomic.remote_addr);
    OFF(ibv_send_wr, wr.atomic.compare_add);
    OFF(ibv_send_wr, wr.atomic.swap);
    OFF(ibv_send_wr, wr.atomic.rkey);

    SIZE(ibv_recv_wr);
    OFF(ibv_recv_wr, wr_id);
    OFF(ibv_recv_wr, next);
    OFF(ibv_recv_wr, sg_list);
    OFF(ibv_recv_wr, num_sge);

    SIZE(ibv_wc);
    OFF(ibv_wc, wr_id);
    OFF(ibv_wc, status);
    OFF(ibv_wc, opcode);
    OFF(ibv_wc, vendor_err);
    OFF(ibv_wc, byte_len);
    OFF(ibv_wc, imm_data);
    OFF(ibv_wc, qp_num);
    OFF(ibv_wc, src_qp);
    OFF(ibv_wc, wc_flags);

    SIZE(ibv_comp_channel);
    OFF(ibv_comp_channel, context);
    OFF(ibv_comp_channel, fd);
    OFF(ibv_comp_channel, refcnt);

    SIZE(ibv_srq_init_attr);
    OFF(ibv_srq_init_attr, srq_context);
    OFF(ibv_srq_init_attr, attr.max_wr);
    OFF(ibv_srq_init_attr, attr.max_sge);
    OFF(ibv_srq_init_attr, attr.srq_limit);

    SIZE(ibv_async_event);
    OFF(ibv_async_event, element);
    OFF(ibv_async_event, event_type);

    CONST(IBV_ACCESS_LOCAL_WRITE);
    CONST(IBV_ACCESS_REMOTE_WRITE);
    CONST(IBV_ACCESS_REMOTE_READ);
    CONST(IBV_ACCESS_REMOTE_ATOMIC);
    CONST(IBV_QPT_RC);
    CONST(IBV_QPS_RESET);
    CONST(IBV_QPS_INIT);
    CONST(IBV_QPS_RTR);
    CONST(IBV_QPS_RTS);
    CONST(IBV_QPS_SQD);
    CONST(IBV_QPS_SQE);
    CONST(IBV_QPS_ERR);
    CONST(IBV_QP_STATE);
    CONST(IBV_QP_ACCESS_FLAGS);
    CONST(IBV_QP_PKEY_INDEX);
    CONST(IBV_QP_PORT);
    CONST(IBV_QP_AV);
    CONST(IBV_QP_PATH_MTU);
    CONST(IBV_QP_TIMEOUT);
    CONST(IBV_QP_RETRY_CNT);
    CONST(IBV_QP_RNR_RETRY);
    CONST(IBV_QP_RQ_PSN);
    CONST(IBV_QP_MAX_QP_RD_ATOMIC);
    CONST(IBV_QP_MIN_RNR_TIMER);
    CONST(IBV_QP_SQ_PSN);
    CONST(IBV_QP_MAX_DEST_RD_ATOMIC);
    CONST(IBV_QP_CAP);
    CONST(IBV_QP_DEST_QPN);
    CONST(IBV_WR_RDMA_WRITE);
    CONST(IBV_WR_RDMA_WRITE_WITH_IMM);
    CONST(IBV_WR_SEND);
    CONST(IBV_WR_SEND_WITH_IMM);
    CONST(IBV_WR_RDMA_READ);
    CONST(IBV_WR_ATOMIC_CMP_AND_SWP);
    CONST(IBV_WR_ATOMIC_FETCH_AND_ADD);
    CONST(IBV_SEND_FENCE);
    CONST(IBV_SEND_SIGNALED);
    CONST(IBV_SEND_SOLICITED);
    CONST(IBV_SEND_INLINE);
    CONST(IBV_WC_SEND);
    CONST(IBV_WC_RDMA_WRITE);
    CONST(IBV_WC_RDMA_READ);
    CONST(IBV_WC_COMP_SWAP);
    CONST(IBV_WC_FETCH_ADD);
    CONST(IBV_WC_RECV);
    CONST(IBV_WC_RECV_RDMA_WITH_IMM);
    CONST(IBV_WC_SUCCESS);
    CONST(IBV_WC_LOC_LEN_ERR);
    CONST(IBV_WC_LOC_PROT_ERR);
    CONST(IBV_WC_WR_FLUSH_ERR);
    CONST(IBV_WC_REM_ACCESS_ERR);
    CONST(IBV_WC_RETRY_EXC_ERR);
    CONST(IBV_WC_RNR_RETRY_EXC_ERR);
    CONST(IBV_WC_WITH_IMM);
    CONST(IBV_PORT_DOWN);
    CONST(IBV_PORT_ACTIVE);
    CONST(IBV_LINK_LAYER_UNSPECIFIED);
    CONST(IBV_LINK_LAYER_INFINIBAND);
    CONST(IBV_LINK_LAYER_ETHERNET);
    CONST(IBV_MTU_256);
    CONST(IBV_MTU_512);
    CONST(IBV_MTU_1024);
    CONST(IBV_MTU_2048);
    CONST(IBV_MTU_4096);
    CONST(IBV_GID_TYPE_IB);
    CONST(IBV_GID_TYPE_ROCE_V1);
    CONST(IBV_GID_TYPE_ROCE_V2);
    CONST(IBV_EVENT_CQ_ERR);
    CONST(IBV_EVENT_QP_FATAL);
    CONST(IBV_EVENT_QP_REQ_ERR);
    CONST(IBV_EVENT_QP_ACCESS_ERR);
    CONST(IBV_EVENT_COMM_EST);
    CONST(IBV_EVENT_SQ_DRAINED);
    CONST(IBV_EVENT_PATH_MIG);
    CONST(IBV_EVENT_PATH_MIG_ERR);
    CONST(IBV_EVENT_DEVICE_FATAL);
    CONST(IBV_EVENT_PORT_ACTIVE);
    CONST(IBV_EVENT_PORT_ERR);
    CONST(IBV_EVENT_LID_CHANGE);
    CONST(IBV_EVENT_PKEY_CHANGE);
    CONST(IBV_EVENT_SM_CHANGE);
    CONST(IBV_EVENT_SRQ_ERR);
    CONST(IBV_EVENT_SRQ_LIMIT_REACHED);
    CONST(IBV_EVENT_QP_LAST_WQE_REACHED);
    CONST(IBV_EVENT_CLIENT_REREGISTER);
    CONST(IBV_EVENT_GID_CHANGE);
    CONST(IBV_EVENT_WQ_FATAL);
    return 0;
}
