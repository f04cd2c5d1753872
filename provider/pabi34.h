/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pabi34.h - tbrdma's own declaration of the private libibverbs provider
 * ABI, version IBVERBS_PRIVATE_34 (rdma-core 44, Debian 12).
 *
 * libibverbs-dev does not install infiniband/driver.h or kern-abi.h, so the
 * few pieces this provider uses are declared here from the ABI: structure
 * layouts the library reads or writes (verbs_device_ops, verbs_match_ent,
 * verbs_device, verbs_context_ops, verbs_mr/qp/cq/srq), the exported
 * ibv_cmd_* helpers (symbol version IBVERBS_PRIVATE_34) and the uverbs
 * command buffers they take (a struct ib_uverbs_cmd_hdr followed by the
 * kernel's request struct from <rdma/ib_user_verbs.h>).
 *
 * The private ABI changes whenever rdma-core bumps IBVERBS_PRIVATE_N;
 * provider/Makefile refuses to build unless the installed libibverbs.so.1
 * exports verbs_register_driver_34@IBVERBS_PRIVATE_34, and the VM tests prove
 * the layouts by running ibv_devinfo and real verbs through this provider.
 */
#ifndef TBRDMA_PABI34_H
#define TBRDMA_PABI34_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#define TBR_PABI_VERSION 34

/* ccan/list.h's node: two pointers */
struct tbr_pabi_list_node {
	struct tbr_pabi_list_node *next, *prev;
};

struct verbs_sysfs_dev;	/* opaque to this provider */

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct tbr_pabi_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_xrcd;

/* verbs_qp.comp_mask: ibv_qp_to_qp_ex returns &qp_ex only with VERBS_QP_EX */
enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

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
	tbr_pabi_unused_fn import_dm;
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
	tbr_pabi_unused_fn query_qp_data_in_order;
	tbr_pabi_unused_fn query_rt_values;
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
	tbr_pabi_unused_fn unimport_dm;
	tbr_pabi_unused_fn unimport_mr;
	tbr_pabi_unused_fn unimport_pd;
};
_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *),
	       "verbs_context_ops of PABI 34 has 76 members");

/* uverbs write() command buffers: header + the kernel's request struct */
#define TBR_PABI_CMD(name, kabi)				\
	struct name {						\
		struct ib_uverbs_cmd_hdr hdr;			\
		struct kabi core_payload;			\
	}
TBR_PABI_CMD(ibv_get_context, ib_uverbs_get_context);
TBR_PABI_CMD(ibv_query_port, ib_uverbs_query_port);
TBR_PABI_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
TBR_PABI_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
TBR_PABI_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
TBR_PABI_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
TBR_PABI_CMD(ibv_create_cq, ib_uverbs_create_cq);
TBR_PABI_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
TBR_PABI_CMD(ibv_create_qp, ib_uverbs_create_qp);
TBR_PABI_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
TBR_PABI_CMD(ibv_query_qp, ib_uverbs_query_qp);
TBR_PABI_CMD(ibv_create_srq, ib_uverbs_create_srq);
TBR_PABI_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
TBR_PABI_CMD(ibv_query_srq, ib_uverbs_query_srq);

/* extended commands: both headers, then the kernel's request struct */
struct tbr_pabi_ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};
#define TBR_PABI_CMD_EX(name, kabi)				\
	struct name {						\
		struct tbr_pabi_ex_hdr hdr;			\
		struct kabi core_payload;			\
	};							\
	_Static_assert(sizeof(struct name) % 8 == 0 &&		\
		       sizeof(struct name) == sizeof(struct tbr_pabi_ex_hdr) + \
		       sizeof(struct kabi), #name " layout")
TBR_PABI_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
TBR_PABI_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);

/* exported by libibverbs.so.1 with version IBVERBS_PRIVATE_34 */
void verbs_register_driver_34(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *attr_ex,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

#endif /* TBRDMA_PABI34_H */
