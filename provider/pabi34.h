/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pabi34.h - tbrdma's own declaration of libibverbs' private provider ABI
 * IBVERBS_PRIVATE_34, as in rdma-core 34 to 56 (Debian 12 and 13, Ubuntu 24.04).
 *
 * provider/Makefile includes the pabiN.h of the N the installed
 * libibverbs.so.1 exports (verbs_register_driver_N@IBVERBS_PRIVATE_N) with
 * TBR_RDMA_CORE, its rdma-core release, and refuses one outside
 * TBR_PABI_RDMA_CORE_MIN..MAX. rdma-core has changed verbs_context_ops
 * within one N (34: two members in 35, one in 36; 59: two in 62), so the
 * members follow TBR_RDMA_CORE; provider/pabi-check proves every release of the
 * range against rdma-core's own headers.
 * The parts common to every N are in pabi-common.h; here: the context ops
 * (in the library's alphabetical order) and the helpers whose signature
 * differs between ABIs, behind one wrapper each (tbr_pabi_*) that the
 * provider calls.
 */
#ifndef TBRDMA_PABI_H
#define TBRDMA_PABI_H

#define TBR_PABI_VERSION 34
#define TBR_PABI_RDMA_CORE_MIN 34
#define TBR_PABI_RDMA_CORE_MAX 56

#ifndef TBR_RDMA_CORE
#error "TBR_RDMA_CORE (the rdma-core release of the installed libibverbs) is not set"
#endif

#include "pabi-common.h"

/*
 * The releases whose libibverbs has exactly the layout declared here for
 * TBR_RDMA_CORE: the package's libibverbs1 dependency (debian/rules).
 */
#if TBR_RDMA_CORE >= 36
#define TBR_PABI_SAME_FROM 36
#define TBR_PABI_SAME_TO 56
#elif TBR_RDMA_CORE >= 35
#define TBR_PABI_SAME_FROM 35
#define TBR_PABI_SAME_TO 35
#else
#define TBR_PABI_SAME_FROM 34
#define TBR_PABI_SAME_TO 34
#endif

#ifndef TBR_PABI_DECLS_ONLY
/*
 * The provider's operations, in the library's (alphabetical) order. Only
 * the members this provider sets are typed; the others are placeholders of
 * the same size (function pointers) and stay NULL.
 */
typedef void (*tbr_pabi_unused_fn)(void);

struct verbs_context_ops {
	tbr_pabi_unused_fn advise_mr;
	tbr_pabi_unused_fn alloc_dm;
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	tbr_pabi_unused_fn alloc_null_mr;
	tbr_pabi_unused_fn alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	tbr_pabi_unused_fn alloc_td;
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	tbr_pabi_unused_fn attach_counters_point_flow;
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	tbr_pabi_unused_fn close_xrcd;
	tbr_pabi_unused_fn cq_event;
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	tbr_pabi_unused_fn create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *attr);
	tbr_pabi_unused_fn create_flow;
	tbr_pabi_unused_fn create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	tbr_pabi_unused_fn create_rwq_ind_table;
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	tbr_pabi_unused_fn create_srq_ex;
	tbr_pabi_unused_fn create_wq;
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	tbr_pabi_unused_fn dealloc_td;
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	tbr_pabi_unused_fn destroy_counters;
	int (*destroy_cq)(struct ibv_cq *cq);
	tbr_pabi_unused_fn destroy_flow;
	tbr_pabi_unused_fn destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	tbr_pabi_unused_fn destroy_rwq_ind_table;
	int (*destroy_srq)(struct ibv_srq *srq);
	tbr_pabi_unused_fn destroy_wq;
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	tbr_pabi_unused_fn free_dm;
	tbr_pabi_unused_fn get_srq_num;
#if TBR_RDMA_CORE >= 35
	tbr_pabi_unused_fn import_dm;
#endif
	tbr_pabi_unused_fn import_mr;
	tbr_pabi_unused_fn import_pd;
	tbr_pabi_unused_fn modify_cq;
	tbr_pabi_unused_fn modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	tbr_pabi_unused_fn modify_qp_rate_limit;
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	tbr_pabi_unused_fn modify_wq;
	tbr_pabi_unused_fn open_qp;
	tbr_pabi_unused_fn open_xrcd;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	tbr_pabi_unused_fn post_srq_ops;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	tbr_pabi_unused_fn query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
#if TBR_RDMA_CORE >= 36
	tbr_pabi_unused_fn query_qp_data_in_order;
#endif
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	tbr_pabi_unused_fn read_counters;
	tbr_pabi_unused_fn reg_dm_mr;
	tbr_pabi_unused_fn reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	tbr_pabi_unused_fn set_ece;
#if TBR_RDMA_CORE >= 35
	tbr_pabi_unused_fn unimport_dm;
#endif
	tbr_pabi_unused_fn unimport_mr;
	tbr_pabi_unused_fn unimport_pd;
};
_Static_assert(sizeof(struct verbs_context_ops) ==
	       (TBR_RDMA_CORE >= 36 ? 76 : TBR_RDMA_CORE >= 35 ? 75 : 73) *
	       sizeof(void *), "verbs_context_ops of PABI 34: 73, 75 or 76 members");
#endif /* !TBR_PABI_DECLS_ONLY */

/* exported by libibverbs.so.1 with version IBVERBS_PRIVATE_34 */
void verbs_register_driver_34(const struct verbs_device_ops *ops);
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *attr_ex,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);

/* the provider's calls, the same in every pabiN.h */
static inline void tbr_pabi_register_driver(const struct verbs_device_ops *ops)
{
	verbs_register_driver_34(ops);
}

static inline int
tbr_pabi_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
		     size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
		     size_t resp_size)
{
	return ibv_cmd_get_context(context, cmd, cmd_size, resp,
				   resp_size);
}

static inline int
tbr_pabi_create_cq_ex(struct ibv_context *context,
		      const struct ibv_cq_init_attr_ex *cq_attr,
		      struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
		      size_t cmd_size, struct ib_uverbs_ex_create_cq_resp *resp,
		      size_t resp_size, uint32_t cmd_flags)
{
	return ibv_cmd_create_cq_ex(context, cq_attr, cq, cmd, cmd_size,
				    resp, resp_size, cmd_flags);
}

static inline int
tbr_pabi_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
		       struct ibv_qp_init_attr_ex *attr_ex,
		       struct ibv_create_qp_ex *cmd, size_t cmd_size,
		       struct ib_uverbs_ex_create_qp_resp *resp,
		       size_t resp_size)
{
	return ibv_cmd_create_qp_ex2(context, qp, attr_ex, cmd, cmd_size, resp,
				     resp_size);
}

#endif /* TBRDMA_PABI_H */
