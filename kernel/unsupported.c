// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: verbs the RDMA core requires (ib_device_check_mandatory) that this
 * module does not implement yet. Each fails with -EOPNOTSUPP. Issue 3
 * ("Verbs end to end on an emulated cable") replaces them with cq.c, qp.c,
 * mr.c; nothing here pretends to work.
 */
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "tbrdma.h"

static int tbr_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			 TBR_CREATE_CQ_UDATA_ARG)
{
	return -EOPNOTSUPP;
}

static int tbr_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return 0;	/* unreachable: no CQ can be created */
}

static int tbr_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

static int tbr_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

static int tbr_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
			 struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int tbr_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int attr_mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int tbr_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return 0;	/* unreachable: no QP can be created */
}

static int tbr_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int tbr_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static struct ib_mr *tbr_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct ib_mr *tbr_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				     u64 virt_addr, int access,
				     struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int tbr_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	return 0;	/* unreachable: no MR can be registered */
}

const struct ib_device_ops tbr_unsupported_ops = {
	.create_cq = tbr_create_cq,
	.destroy_cq = tbr_destroy_cq,
	.poll_cq = tbr_poll_cq,
	.req_notify_cq = tbr_req_notify_cq,
	.create_qp = tbr_create_qp,
	.modify_qp = tbr_modify_qp,
	.destroy_qp = tbr_destroy_qp,
	.post_send = tbr_post_send,
	.post_recv = tbr_post_recv,
	.get_dma_mr = tbr_get_dma_mr,
	.reg_user_mr = tbr_reg_user_mr,
	.dereg_mr = tbr_dereg_mr,
};
