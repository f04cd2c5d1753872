/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tbrdma: every device limit reported to the RDMA core, in one place. */
#ifndef TBRDMA_LIMITS_H
#define TBRDMA_LIMITS_H

#include "core/tbr_core.h"
#include "core/tbr_wire.h"

#define TBR_VENDOR_ID		0xffffff	/* no IEEE OUI: out-of-tree driver */
#define TBR_VENDOR_PART_ID	0x7b01
#define TBR_HW_VERSION		1
#define TBR_MAX_MR_SIZE		(1ULL << 40)
#define TBR_PAGE_SIZE_CAP	0xfffff000U	/* 4 KiB and up */
#define TBR_MAX_PD		0x10000
#define TBR_MAX_PKEYS		TBR_PKEY_TBL_LEN	/* core/tbr_pkey.h */
#define TBR_PORT_GID_TBL_LEN	32
#define TBR_PORT_MAX_MSG_SZ	0x80000000U	/* 2 GiB */

/*
 * Links and rails. A rail frame is the transport core's frame (the NHI
 * frame, core/tbr_wire.h); a link holds at most 16 rails. The values the
 * uapi and the core carry for them are tied to these in main.c.
 */
#define TBR_FRAME_SIZE_MAX	TBR_FRAME_MAX
#define TBR_LINK_MAX_RAILS	16
/*
 * TX frames of each rail that only management datagrams may take (this
 * fabric's VL15): a data stream that keeps every ring full must not starve
 * tbrdmad's sweep, or its neighbours time the host out and withdraw its
 * routes under that very stream. A quarter of a ring at most (stripe.c).
 */
#define TBR_LINK_MGMT_TX_RESERVE	2

/* queue pairs: QPN 0/1 are reserved (SMI/GSI), user QPNs start at 16 */
#define TBR_MIN_QPN		16
#define TBR_MAX_QPN		0xffffff
#define TBR_MAX_QP		4096
#define TBR_MAX_QP_WR		16384		/* per SQ or RQ, a power of 2 */
#define TBR_DEV_MAX_SGE		TBR_MAX_SGE	/* the transport core's WQE */
#define TBR_DEV_MAX_INLINE	TBR_MAX_INLINE
#define TBR_MAX_RD_ATOM		16		/* responder replay cache */

/*
 * UD: every datagram carries a TBR_UD_ADDR_LEN-byte address block (source and
 * destination GID, flow label, traffic class, hop limit; docs/protocol.md)
 * ahead of its payload, so a UD send has one SGE and that many inline bytes
 * fewer (TBR_UD_ADDR_LEN is wire format: core/tbr_wire.h). Datagrams are at
 * most the port's active MTU (2048 bytes).
 */
#define TBR_UD_MAX_SGE		(TBR_DEV_MAX_SGE - 1)
#define TBR_UD_MAX_INLINE	(TBR_DEV_MAX_INLINE - TBR_UD_ADDR_LEN)
#define TBR_MAX_AH		65535		/* AH numbers 1 .. TBR_MAX_AH */

/* UD multicast: groups per device, QPs of the device per group (verbs/mcast.c) */
#define TBR_MAX_MCG		256
#define TBR_MAX_MCG_QP		64

/* completion queues */
#define TBR_MAX_CQ		4096
#define TBR_MAX_CQE		65536		/* a power of 2 */

/* memory regions: key = index << 8 | key byte; index 0 is never used */
#define TBR_MAX_MR		65536
/* pages (blocks of ibmr.page_size) of a fast registration MR */
#define TBR_MAX_FAST_REG_PAGES	512
/*
 * memory windows: rkey = index << 8 | key byte, the index in
 * TBR_MAX_MR .. TBR_MAX_MR + TBR_MAX_MW - 1, so a key's index tells a
 * window's rkey from an MR's key
 */
#define TBR_MAX_MW		65536

/* shared receive queues */
#define TBR_MAX_SRQ		1024
#define TBR_MAX_SRQ_WR		16384
#define TBR_MAX_SRQ_SGE		TBR_DEV_MAX_SGE

#endif /* TBRDMA_LIMITS_H */
