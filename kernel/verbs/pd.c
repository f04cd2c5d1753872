// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbrdma: protection domains. */
#include "tbrdma.h"

/* Context: process; the RDMA core allocated @ibpd (INIT_RDMA_OBJ_SIZE). */
int tbr_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

/* Context: process; every object of the PD is already destroyed. */
int tbr_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}
