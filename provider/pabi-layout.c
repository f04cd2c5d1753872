// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pabi-layout.c - prints the layout facts the provider relies on, one
 * "name value" line each, for provider/pabi-check to compare.
 *
 * Compiled twice per rdma-core release: with -DTBR_LAYOUT_RDMA_CORE against
 * that release's own infiniband/driver.h (in a temporary directory, never in
 * the tree), and without it against this provider's pabiN.h (-DTBR_PABI=N)
 * and the same release's public headers. Both runs must print the same
 * lines. TBR_OPS_LIST is X(member)... of every verbs_context_ops member
 * pabiN.h declares (pabi-check reads them from the header), so a member
 * rdma-core lacks fails the rdma-core compile, and one it has more changes
 * the struct's size.
 */
#include <stdio.h>
#include <stddef.h>

#ifdef TBR_LAYOUT_RDMA_CORE
#include <infiniband/driver.h>
#else
#include "tbrdma.h"
#endif

#define OFF(s, m) printf("offsetof(%s.%s) %zu\n", #s, #m, offsetof(struct s, m))
#define SIZE(s) printf("sizeof(%s) %zu\n", #s, sizeof(struct s))
#define VAL(e) printf("%s %lld\n", #e, (long long)(e))
#define OPS(m) OFF(verbs_context_ops, m);
#define CMD(s) do { SIZE(s); OFF(s, core_payload); } while (0)

int main(void)
{
	OFF(verbs_match_ent, driver_data);
	OFF(verbs_match_ent, u.modalias);
	OFF(verbs_match_ent, u.driver_id);
	OFF(verbs_match_ent, vendor);
	OFF(verbs_match_ent, device);
	OFF(verbs_match_ent, kind);
	SIZE(verbs_match_ent);
	VAL(VERBS_MATCH_SENTINEL);
	VAL(VERBS_MATCH_PCI);
	VAL(VERBS_MATCH_MODALIAS);
	VAL(VERBS_MATCH_DRIVER_ID);

	OFF(verbs_device_ops, name);
	OFF(verbs_device_ops, match_min_abi_version);
	OFF(verbs_device_ops, match_max_abi_version);
	OFF(verbs_device_ops, match_table);
	OFF(verbs_device_ops, static_providers);
	OFF(verbs_device_ops, match_device);
	OFF(verbs_device_ops, alloc_context);
	OFF(verbs_device_ops, import_context);
	OFF(verbs_device_ops, alloc_device);
	OFF(verbs_device_ops, uninit_device);
	SIZE(verbs_device_ops);

	OFF(verbs_device, device);
	OFF(verbs_device, ops);
	OFF(verbs_device, refcount);
	OFF(verbs_device, entry);
	OFF(verbs_device, sysfs);
	OFF(verbs_device, core_support);
	SIZE(verbs_device);

	OFF(verbs_mr, ibv_mr);
	OFF(verbs_mr, mr_type);
	OFF(verbs_mr, access);
	SIZE(verbs_mr);
	VAL(IBV_MR_TYPE_MR);
	VAL(IBV_MR_TYPE_NULL_MR);
	VAL(IBV_MR_TYPE_IMPORTED_MR);
	VAL(IBV_MR_TYPE_DMABUF_MR);

	OFF(verbs_qp, qp);
	OFF(verbs_qp, qp_ex);
	OFF(verbs_qp, comp_mask);
	OFF(verbs_qp, xrcd);
	SIZE(verbs_qp);
	VAL(VERBS_QP_XRCD);
	VAL(VERBS_QP_EX);

	OFF(verbs_cq, cq);
	OFF(verbs_cq, cq_ex);
	SIZE(verbs_cq);

	OFF(verbs_srq, srq);
	OFF(verbs_srq, srq_type);
	OFF(verbs_srq, xrcd);
	OFF(verbs_srq, cq);
	OFF(verbs_srq, srq_num);
	SIZE(verbs_srq);

	TBR_OPS_LIST(OPS)
	SIZE(verbs_context_ops);

	CMD(ibv_get_context);
	CMD(ibv_query_port);
	CMD(ibv_alloc_pd);
	CMD(ibv_reg_mr);
	CMD(ibv_rereg_mr);
	CMD(ibv_alloc_mw);
	CMD(ibv_create_cq);
	CMD(ibv_resize_cq);
	CMD(ibv_create_qp);
	CMD(ibv_modify_qp);
	CMD(ibv_query_qp);
	CMD(ibv_create_srq);
	CMD(ibv_modify_srq);
	CMD(ibv_query_srq);
	CMD(ibv_create_cq_ex);
	CMD(ibv_create_qp_ex);
	return 0;
}
