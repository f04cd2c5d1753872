/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cq_attr.h - the provider's OS-independent CQ decisions, kept apart so the
 * host unit tests (tests/unit/test_provider_cq.c) run them without a device:
 * which ibv_create_cq_ex requests are taken, which CQE format they get, and
 * the time-namespace offset of the raw clock (ibv_query_rt_values_ex).
 */
#ifndef TBRDMA_PROVIDER_CQ_ATTR_H
#define TBRDMA_PROVIDER_CQ_ATTR_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tbrdma-abi.h"

/* the fields a CQE carries (struct tbrdma_cqe) */
#define TBR_CQ_EX_WC_FLAGS						\
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |			\
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |		\
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |			\
	 IBV_WC_EX_WITH_DLID_PATH_BITS)
/* and the two a 64-byte CQE adds (struct tbrdma_cqe_ts) */
#define TBR_CQ_EX_TS_FLAGS						\
	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |				\
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/*
 * May ibv_create_cq_ex create this CQ? 0, or EOPNOTSUPP for what tbrdma
 * does not provide: CVLAN, flow tag, TM info and any later wc field, a
 * parent domain, CQ create flags (IGNORE_OVERRUN, SINGLE_THREADED). *ts:
 * the CQ wants timestamps, so its CQEs are struct tbrdma_cqe_ts.
 */
static inline int tbr_cq_ex_attr_check(uint64_t wc_flags, uint32_t comp_mask,
				       uint32_t flags, bool *ts)
{
	if ((wc_flags & ~(uint64_t)(TBR_CQ_EX_WC_FLAGS | TBR_CQ_EX_TS_FLAGS)) ||
	    (comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && flags))
		return EOPNOTSUPP;
	*ts = !!(wc_flags & TBR_CQ_EX_TS_FLAGS);
	return 0;
}

/* the stride the kernel must answer for a CQ with or without timestamps */
static inline uint32_t tbr_cqe_stride(bool ts)
{
	return ts ? sizeof(struct tbrdma_cqe_ts) : sizeof(struct tbrdma_cqe);
}

/*
 * The CLOCK_MONOTONIC offset of our time namespace, from the text of
 * /proc/self/timens_offsets ("monotonic SECS NSECS" and "boottime ..."
 * lines): the CQE's ts_ns is the initial namespace's clock, clock_gettime
 * ours. Returns the offset in ns, 0 when the text has no monotonic line.
 */
static inline int64_t tbr_timens_mono_offset(const char *text)
{
	const char *p = text;
	long long sec, nsec;

	while (p && *p) {
		if (sscanf(p, "monotonic %lld %lld", &sec, &nsec) == 2)
			return (int64_t)sec * 1000000000 + nsec;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

#endif /* TBRDMA_PROVIDER_CQ_ATTR_H */
