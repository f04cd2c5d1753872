/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tbrdma: differences between the kernel releases we build for (6.1 .. 6.12). */
#ifndef TBRDMA_COMPAT_H
#define TBRDMA_COMPAT_H

#include <linux/version.h>

/* 6.10 passes a uverbs_attr_bundle instead of ib_udata to create_cq. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define TBR_CREATE_CQ_UDATA_ARG struct uverbs_attr_bundle *attrs
#define TBR_CREATE_CQ_UDATA(attrs) ((attrs) ? &(attrs)->driver_udata : NULL)
#define TBR_CREATE_CQ_UDATA_NAME attrs
#else
#define TBR_CREATE_CQ_UDATA_ARG struct ib_udata *udata_arg
#define TBR_CREATE_CQ_UDATA(udata_arg) (udata_arg)
#define TBR_CREATE_CQ_UDATA_NAME udata_arg
#endif

/*
 * Lanes of a Thunderbolt XDomain link from tb_xdomain.link_width: a lane
 * count (1 or 2) in 6.1, enum tb_link_width bits (single, dual,
 * asymmetric USB4 v2) since the 6.5 cycle; 6.1 and 6.12 are what we build
 * and test. Needs <linux/thunderbolt.h>.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define tbr_tb_lanes(w) (((w) & (TB_LINK_WIDTH_DUAL | TB_LINK_WIDTH_ASYM_TX | \
				TB_LINK_WIDTH_ASYM_RX)) ? 2U : 1U)
#else
#define tbr_tb_lanes(w) ((w) >= 2 ? 2U : 1U)
#endif

/*
 * Is the firmware connection manager (drivers/thunderbolt/icm.c) behind
 * this XDomain? What <linux/thunderbolt.h> shows of it, 6.1 and 6.12 alike:
 * the software CM (tb.c tb_scan_xdomain()) allocates an XDomain with no
 * remote UUID, and tb_xdomain_alloc() then sets needs_uuid (never cleared);
 * icm.c add_xdomain() passes the UUID the firmware reported, so needs_uuid
 * stays false, for older controllers (icm_fr_xdomain_connected(): link and
 * depth set) and Titan Ridge and later (icm_tr_xdomain_connected(): link
 * 0) alike. xd->link alone misses the latter. Not usable: tb->cm_ops (the
 * ops tables are static), tb->security_level (tb.c sets user or nopcie,
 * the firmware reports what the BIOS set, user included), tb->nboot_acl
 * (0 on firmware without boot ACLs).
 */
#define tbr_tb_fw_cm(xd) ((xd)->link != 0 || !(xd)->needs_uuid)

#endif /* TBRDMA_COMPAT_H */
