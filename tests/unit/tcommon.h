/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tcommon.h - helpers shared by the transport-core unit tests. */
#ifndef TBR_TCOMMON_H
#define TBR_TCOMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sim.h"

static inline struct tbr_sge tsge(void *p, uint32_t len)
{
	struct tbr_sge s = {
		.addr = (uint64_t)(uintptr_t)p,
		.length = len,
		.lkey = SIM_LKEY,
	};
	return s;
}

/* Post a one-SGE WR; @sge must stay valid only during the call. */
static inline int tpost(struct sim_ep *ep, enum tbr_wr_opcode op,
			uint64_t wr_id, void *local, uint32_t len,
			uint64_t raddr, uint32_t rkey, uint32_t flags)
{
	struct tbr_sge sge = tsge(local, len);
	struct tbr_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.flags = flags | TBR_WR_SIGNALED;
	wr.sgl = &sge;
	wr.num_sge = 1;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	return sim_post(ep, &wr);
}

static inline uint64_t taddr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static inline void tfill(struct sim *s, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)sim_rand(s);
}

static inline struct sim *tsim(enum tbr_tqp_type type, uint64_t seed,
			       void (*tweak_cfg)(struct tbr_tqp_cfg *),
			       void (*tweak_conn)(struct tbr_tqp_conn *))
{
	struct tbr_tqp_cfg cfg;
	struct tbr_tqp_conn conn;
	struct sim *s;

	sim_default_cfg(&cfg, type);
	tbr_tqp_conn_defaults(&conn);
	conn.timeout_ns = 200000;
	conn.sq_psn = 0xfffff0 & TBR_PSN_MASK;	/* exercise PSN wrap */
	conn.rq_psn = 0xfffff0 & TBR_PSN_MASK;
	if (tweak_cfg)
		tweak_cfg(&cfg);
	if (tweak_conn)
		tweak_conn(&conn);
	s = sim_new(type, &cfg, &conn, seed);
	assert_non_null(s);
	return s;
}

#define T_SEC	1000000000ull

/* TEST_FILTER=glob runs a subset (cmocka pattern). */
static inline void tfilter(void)
{
	const char *f = getenv("TEST_FILTER");

	if (f)
		cmocka_set_test_filter(f);
}

#endif
