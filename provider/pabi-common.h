/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pabi-common.h - the part of libibverbs' private provider ABI that is the
 * same in every IBVERBS_PRIVATE_N this provider supports (34, 57, 59, 64, 65;
 * rdma-core 44 to 65). Included by each pabiN.h, never directly.
 *
 * libibverbs-dev does not install infiniband/driver.h or kern-abi.h, so the
 * pieces this provider uses are declared here from the ABI: structure
 * layouts the library reads or writes (verbs_match_ent, verbs_device_ops,
 * verbs_device, verbs_mr/qp/cq/srq), the uverbs command buffers the
 * ibv_cmd_* helpers take (a struct ib_uverbs_cmd_hdr followed by the
 * kernel's request struct from <rdma/ib_user_verbs.h>) and the exported
 * helpers whose signature did not change.
 *
 * provider/pabi-check (docs/packaging.md) proves these against rdma-core's own
 * headers of every release in each pabiN.h's range: the offsets and sizes
 * of every field the provider uses, and (TBR_PABI_DECLS_ONLY: the
 * structures then come from rdma-core's driver.h) that every prototype and
 * wrapper here is compatible with rdma-core's declaration.
 */
#ifndef TBRDMA_PABI_COMMON_H
#define TBRDMA_PABI_COMMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#ifndef TBR_PABI_DECLS_ONLY
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
#endif /* !TBR_PABI_DECLS_ONLY */

/* exported by libibverbs.so.1 with version IBVERBS_PRIVATE_N */
struct verbs_context_ops;
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

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
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
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

#endif /* TBRDMA_PABI_COMMON_H */
