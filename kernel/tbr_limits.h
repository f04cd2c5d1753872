/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tbrdma: every device limit reported to the RDMA core, in one place. */
#ifndef TBRDMA_LIMITS_H
#define TBRDMA_LIMITS_H

#define TBR_VENDOR_ID		0xffffff	/* no IEEE OUI: out-of-tree driver */
#define TBR_VENDOR_PART_ID	0x7b01
#define TBR_HW_VERSION		1
#define TBR_MAX_MR_SIZE		(1ULL << 40)
#define TBR_PAGE_SIZE_CAP	0xfffff000U	/* 4 KiB and up */
#define TBR_MAX_PD		0x10000
#define TBR_MAX_PKEYS		1
#define TBR_PORT_GID_TBL_LEN	32
#define TBR_PORT_MAX_MSG_SZ	0x80000000U	/* 2 GiB */

#endif /* TBRDMA_LIMITS_H */
