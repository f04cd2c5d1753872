// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_ts - completion timestamps of an extended CQ, with RC traffic to a peer (issue 50).
 *
 *   cq_ts [-d DEV] [-g GID_INDEX] [-p PORT] server
 *   cq_ts [-d DEV] [-g GID_INDEX] [-p PORT] client SERVER_IPV4
 *
 * Unmodified verbs, as a program asking for timestamps uses them:
 * - the clock: ibv_query_device_ex reports hca_core_clock 1000000 kHz and a 64-bit
 *   completion_timestamp_mask; ibv_query_rt_values_ex(IBV_VALUES_MASK_RAW_CLOCK) gives ticks
 *   that, converted by hca_core_clock, lie between two CLOCK_MONOTONIC reads around it; a
 *   comp_mask of 0 is answered with comp_mask 0;
 * - refusals (EOPNOTSUPP): ibv_create_cq_ex with CVLAN, FLOW_TAG or TM_INFO (also with the
 *   timestamps), the IGNORE_OVERRUN create flag, a parent domain;
 * - traffic: the client's RC QP completes its sends on a CQ with COMPLETION_TIMESTAMP and
 *   _WALLCLOCK, its receives on one with _WALLCLOCK alone; the server's QP both on one CQ
 *   with both. 100 ping-pongs, then 64 RDMA WRITEs posted at once (polled with
 *   start/next/end_poll; then ibv_next_poll, past ENOENT with the poll still open, finds a
 *   completion that came later), 16 more polled with ibv_poll_cq on the same CQ, and 8
 *   that complete before an ibv_resize_cq and are polled after it. Every timestamp is checked: never below
 *   the CQ's previous one, not before the WR was posted nor after it was polled (the raw
 *   clock read around both), the wallclock likewise against CLOCK_REALTIME; at the end the
 *   span of a CQ's timestamps converted by hca_core_clock matches the span of its wallclock
 *   values (within 1 ms + 0.1%) and fits within the run. Last, the same ping-pong on a second
 *   QP pair whose CQs have no timestamps (ibv_create_cq): both round trips are printed.
 * Each side prints its numbers and "cq_ts SIDE: ok" and exits 0, or "FAIL: ..." and 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define NPING	100
#define NBURST	64
#define NPOLL	16
#define NRESIZE	8
#define MSG	64
#define WLEN	4096

#define TS_FLAGS (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

struct peer {
	uint32_t qpn, psn, rkey, qpn_plain;
	uint64_t addr;
	union ibv_gid gid;
};

/* one extended CQ and what its completions showed so far */
struct tcq {
	const char *name;
	struct ibv_cq_ex *cq;
	bool ts, wall;
	uint64_t prev_ts, first_ts, prev_wall, first_wall;
	unsigned int n;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static struct ibv_qp *qp;
/* the cost of timestamps: the same ping-pong on a QP whose CQ has none (ibv_create_cq) */
static struct ibv_qp *qp_plain;
static struct ibv_cq *cq_plain;
static struct tcq scq, rcq;	/* the server's are the same CQ */
static uint64_t clock_khz;
static int ctl_fd = -1;
static struct peer me, peer;
static struct {
	uint8_t rbuf[NPING][MSG];
	uint8_t sbuf[MSG];
	uint8_t wbuf[NBURST][WLEN];
} *mem;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* the device's raw clock in ticks (ibv_query_rt_values_ex) */
static uint64_t raw_ticks(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	int ret = ibv_query_rt_values_ex(ctx, &v);

	CHECK(!ret && (v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK),
	      "ibv_query_rt_values_ex: %d (%s), comp_mask %#x", ret, strerror(ret), v.comp_mask);
	return (uint64_t)v.raw_clock.tv_sec * 1000000000 + v.raw_clock.tv_nsec;
}

/* ticks of hca_core_clock (kHz) to ns */
static uint64_t ticks_ns(uint64_t t)
{
	return (uint64_t)((unsigned __int128)t * 1000000 / clock_khz);
}

static void sync_step(uint32_t step)
{
	uint32_t got;

	oob_xfer(ctl_fd, &step, sizeof(step), true);
	oob_xfer(ctl_fd, &got, sizeof(got), false);
	CHECK(got == step, "control channel out of step (%u vs %u)", got, step);
}

static void to_init(struct ibv_qp *q)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	CHECK(!ibv_modify_qp(q, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS), "modify_qp -> INIT");
}

static void check_clock(void)
{
	struct ibv_device_attr_ex da;
	struct ibv_values_ex v = { .comp_mask = 0 };
	uint64_t m0, m1, r;
	int ret;

	strcpy(die_ctx + strlen(die_ctx), ": clock");
	CHECK(!ibv_query_device_ex(ctx, NULL, &da), "ibv_query_device_ex");
	clock_khz = da.hca_core_clock;
	CHECK(clock_khz == 1000000 && da.completion_timestamp_mask == UINT64_MAX,
	      "hca_core_clock %llu kHz, completion_timestamp_mask %#llx: want 1000000, all ones",
	      (unsigned long long)clock_khz, (unsigned long long)da.completion_timestamp_mask);
	m0 = clock_ns(CLOCK_MONOTONIC);
	r = ticks_ns(raw_ticks());
	m1 = clock_ns(CLOCK_MONOTONIC);
	CHECK(m0 <= r && r <= m1, "raw clock %llu ns outside CLOCK_MONOTONIC [%llu, %llu]",
	      (unsigned long long)r, (unsigned long long)m0, (unsigned long long)m1);
	ret = ibv_query_rt_values_ex(ctx, &v);
	CHECK(!ret && !v.comp_mask, "ibv_query_rt_values_ex with comp_mask 0: %d, comp_mask %#x",
	      ret, v.comp_mask);
	printf("clock: hca_core_clock %llu kHz, raw clock = CLOCK_MONOTONIC (%llu ns)\n",
	       (unsigned long long)clock_khz, (unsigned long long)r);
}

static struct ibv_cq_ex *cq_ex(uint64_t wc_flags, uint32_t comp_mask, uint32_t flags)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256, .wc_flags = wc_flags, .comp_mask = comp_mask, .flags = flags,
	};

	return ibv_create_cq_ex(ctx, &ca);
}

static void refusals(void)
{
	static const struct { uint64_t wc; uint32_t mask, flags; const char *what; } bad[] = {
		{ IBV_WC_EX_WITH_CVLAN, 0, 0, "CVLAN" },
		{ IBV_WC_EX_WITH_FLOW_TAG, 0, 0, "FLOW_TAG" },
		{ IBV_WC_EX_WITH_TM_INFO, 0, 0, "TM_INFO" },
		{ TS_FLAGS | IBV_WC_EX_WITH_CVLAN, 0, 0, "timestamps + CVLAN" },
		{ IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, IBV_CQ_INIT_ATTR_MASK_FLAGS,
		  IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, "IGNORE_OVERRUN" },
		{ IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, IBV_CQ_INIT_ATTR_MASK_PD, 0, "parent domain" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(!cq_ex(IBV_WC_STANDARD_FLAGS | bad[i].wc, bad[i].mask, bad[i].flags) &&
		      errno == EOPNOTSUPP, "create_cq_ex %s: not refused with EOPNOTSUPP (errno %d)",
		      bad[i].what, errno);
	}
	printf("refused with EOPNOTSUPP: %zu create_cq_ex requests (CVLAN, FLOW_TAG, TM_INFO, "
	       "IGNORE_OVERRUN, parent domain)\n", sizeof(bad) / sizeof(bad[0]));
}

static void tcq_make(struct tcq *t, const char *name, uint64_t ts_flags)
{
	t->name = name;
	t->cq = cq_ex(IBV_WC_STANDARD_FLAGS | ts_flags, 0, 0);
	CHECK(t->cq, "create_cq_ex %s: %s", name, strerror(errno));
	t->ts = ts_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	t->wall = ts_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
}

/*
 * The completion the cq_ex shows: @wr_id, @opcode, SUCCESS, its timestamp in the CQ's order
 * and within [@lo, now] (raw ticks) and its wallclock within [@wlo, now].
 */
static void check_one(struct tcq *t, uint64_t wr_id, enum ibv_wc_opcode opcode, uint64_t lo,
		      uint64_t wlo)
{
	struct ibv_cq_ex *c = t->cq;
	uint64_t hi = raw_ticks(), whi = clock_ns(CLOCK_REALTIME);

	CHECK(c->status == IBV_WC_SUCCESS && c->wr_id == wr_id && ibv_wc_read_opcode(c) == opcode,
	      "%s: wr_id %llu status %d opcode %d, want wr_id %llu SUCCESS opcode %d", t->name,
	      (unsigned long long)c->wr_id, c->status, ibv_wc_read_opcode(c),
	      (unsigned long long)wr_id, opcode);
	if (t->ts) {
		uint64_t ts = ibv_wc_read_completion_ts(c);

		CHECK(ts >= t->prev_ts, "%s: timestamp %llu below the previous %llu", t->name,
		      (unsigned long long)ts, (unsigned long long)t->prev_ts);
		CHECK(lo <= ts && ts <= hi, "%s wr_id %llu: timestamp %llu outside [%llu, %llu] "
		      "(posted, polled)", t->name, (unsigned long long)wr_id,
		      (unsigned long long)ts, (unsigned long long)lo, (unsigned long long)hi);
		if (!t->n)
			t->first_ts = ts;
		t->prev_ts = ts;
	}
	if (t->wall) {
		uint64_t w = ibv_wc_read_completion_wallclock_ns(c);

		CHECK(wlo <= w && w <= whi, "%s wr_id %llu: wallclock %llu outside [%llu, %llu]",
		      t->name, (unsigned long long)wr_id, (unsigned long long)w,
		      (unsigned long long)wlo, (unsigned long long)whi);
		if (!t->n)
			t->first_wall = w;
		t->prev_wall = w;
	}
	t->n++;
}

/* wait (5 s at most) for one completion and check it; the poll stays open */
static void take_open(struct tcq *t, uint64_t wr_id, enum ibv_wc_opcode opcode, uint64_t lo,
		      uint64_t wlo)
{
	struct ibv_poll_cq_attr pa = { 0 };
	double end = now_s() + 5;
	int r;

	while ((r = ibv_start_poll(t->cq, &pa)) == ENOENT)
		CHECK(now_s() < end, "%s: no completion for wr_id %llu within 5 s", t->name,
		      (unsigned long long)wr_id);
	CHECK(!r, "%s: ibv_start_poll: %d", t->name, r);
	check_one(t, wr_id, opcode, lo, wlo);
}

/* wait (5 s at most) for one completion and check it */
static void take(struct tcq *t, uint64_t wr_id, enum ibv_wc_opcode opcode, uint64_t lo,
		 uint64_t wlo)
{
	take_open(t, wr_id, opcode, lo, wlo);
	ibv_end_poll(t->cq);
}

static void post_recv_on(struct ibv_qp *q, unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)mem->rbuf[i], MSG, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1000 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK(!ibv_post_recv(q, &wr, &bad), "ibv_post_recv %u", i);
}

static void post_recv(unsigned int i)
{
	post_recv_on(qp, i);
}

static void post_send_on(struct ibv_qp *q, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)mem->sbuf, MSG, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	CHECK(!ibv_post_send(q, &wr, &bad), "ibv_post_send %llu", (unsigned long long)wr_id);
}

static void post_send(uint64_t wr_id)
{
	post_send_on(qp, wr_id);
}

/*
 * @n ping-pongs on the QP without timestamps (the client pings, the server answers):
 * returns the client's seconds per round trip
 */
static double plain_pingpong(bool server, unsigned int n)
{
	unsigned int i;
	double t0;

	for (i = 0; i < n; i++)
		post_recv_on(qp_plain, i);
	sync_step(10);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		if (!server)
			post_send_on(qp_plain, i);
		poll_wc_for(cq_plain, server ? 1000 + i : i, IBV_WC_SUCCESS, "plain ping");
		if (server)
			post_send_on(qp_plain, i);
		poll_wc_for(cq_plain, server ? i : 1000 + i, IBV_WC_SUCCESS, "plain pong");
	}
	return (now_s() - t0) / n;
}

/* @n signaled RDMA WRITEs of WLEN bytes, wr_id @first.., posted as one list */
static void post_writes(unsigned int first, unsigned int n)
{
	struct ibv_send_wr wr[NBURST], *bad;
	struct ibv_sge sge[NBURST];
	unsigned int i;

	for (i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)mem->wbuf[i], WLEN, mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = first + i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.next = i + 1 < n ? &wr[i + 1] : NULL,
			.wr.rdma = { peer.addr + (uint64_t)i * WLEN, peer.rkey },
		};
	}
	CHECK(!ibv_post_send(qp, wr, &bad), "ibv_post_send %u WRITEs", n);
}

static void server(void)
{
	uint64_t lo, wlo;
	unsigned int i;

	for (i = 0; i < NPING; i++)
		post_recv(i);
	lo = raw_ticks();
	wlo = clock_ns(CLOCK_REALTIME);
	sync_step(1);
	for (i = 0; i < NPING; i++) {
		take(&scq, 1000 + i, IBV_WC_RECV, lo, wlo);
		CHECK(mem->rbuf[i][0] == (uint8_t)i, "ping %u carries %#x", i, mem->rbuf[i][0]);
		mem->sbuf[0] = (uint8_t)i;
		lo = raw_ticks();
		wlo = clock_ns(CLOCK_REALTIME);
		post_send(i);
		take(&scq, i, IBV_WC_SEND, lo, wlo);
	}
	sync_step(2);		/* the client's WRITEs */
	sync_step(3);
	plain_pingpong(true, NPING);
}

static void client(void)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc wc[NPOLL];
	uint64_t lo, wlo;
	double end, t0;
	unsigned int i, n;
	int r;

	sync_step(1);
	t0 = now_s();
	for (i = 0; i < NPING; i++) {
		post_recv(i);
		mem->sbuf[0] = (uint8_t)i;
		lo = raw_ticks();
		wlo = clock_ns(CLOCK_REALTIME);
		post_send(i);
		take(&scq, i, IBV_WC_SEND, lo, wlo);
		take(&rcq, 1000 + i, IBV_WC_RECV, lo, wlo);
		CHECK(mem->rbuf[i][0] == (uint8_t)i, "pong %u carries %#x", i, mem->rbuf[i][0]);
	}
	printf("%d ping-pongs: %.1f us per round trip, send CQ timestamps in order, "
	       "posted <= timestamp <= polled\n", NPING, (now_s() - t0) * 1e6 / NPING);

	/* a burst: 64 CQEs written close together, read in one start/next/end_poll */
	lo = raw_ticks();
	wlo = clock_ns(CLOCK_REALTIME);
	post_writes(5000, NBURST);
	end = now_s() + 5;
	while ((r = ibv_start_poll(scq.cq, &pa)) == ENOENT)
		CHECK(now_s() < end, "burst: no completion within 5 s");
	CHECK(!r, "burst: ibv_start_poll %d", r);
	for (n = 0; n < NBURST; ) {
		check_one(&scq, 5000 + n, IBV_WC_RDMA_WRITE, lo, wlo);
		n++;
		while (n < NBURST && (r = ibv_next_poll(scq.cq)) == ENOENT)
			CHECK(now_s() < end, "burst: %u of %d completions within 5 s", n, NBURST);
		CHECK(n == NBURST || !r, "burst: ibv_next_poll %d", r);
	}
	ibv_end_poll(scq.cq);
	printf("burst of %d WRITEs: timestamps in order over %llu ns\n", NBURST,
	       (unsigned long long)ticks_ns(scq.prev_ts - lo));

	/*
	 * ibv_next_poll after ENOENT, the poll still open: a completion that
	 * arrives later is found (the burst's loop relies on it when it polls
	 * faster than the CQEs come; the provider used to answer ENOENT forever)
	 */
	lo = raw_ticks();
	wlo = clock_ns(CLOCK_REALTIME);
	post_writes(5500, 1);
	take_open(&scq, 5500, IBV_WC_RDMA_WRITE, lo, wlo);
	CHECK(ibv_next_poll(scq.cq) == ENOENT, "ibv_next_poll: a CQE nobody asked for");
	lo = raw_ticks();
	wlo = clock_ns(CLOCK_REALTIME);
	post_writes(5501, 1);
	end = now_s() + 5;
	while ((r = ibv_next_poll(scq.cq)) == ENOENT)
		CHECK(now_s() < end, "ibv_next_poll after ENOENT: wr_id 5501 not seen within 5 s");
	CHECK(!r, "ibv_next_poll after ENOENT: %d", r);
	check_one(&scq, 5501, IBV_WC_RDMA_WRITE, lo, wlo);
	ibv_end_poll(scq.cq);
	printf("ibv_next_poll after ENOENT: a later completion found in the same poll\n");

	/* ibv_poll_cq reads the same 64-byte CQEs */
	post_writes(6000, NPOLL);
	end = now_s() + 5;
	for (n = 0; n < NPOLL; n += r) {
		r = ibv_poll_cq(ibv_cq_ex_to_cq(scq.cq), NPOLL - n, wc + n);
		CHECK(r >= 0 && now_s() < end, "ibv_poll_cq: %d, %u of %d", r, n, NPOLL);
	}
	for (i = 0; i < NPOLL; i++)
		CHECK(wc[i].wr_id == 6000 + i && wc[i].status == IBV_WC_SUCCESS &&
		      wc[i].opcode == IBV_WC_RDMA_WRITE && wc[i].qp_num == qp->qp_num,
		      "ibv_poll_cq on the timestamp CQ: %s", wc_str(&wc[i]));

	/* CQEs pending over a resize keep their timestamps */
	lo = raw_ticks();
	wlo = clock_ns(CLOCK_REALTIME);
	post_writes(7000, NRESIZE);
	usleep(300000);		/* they complete; one that is later still lands in the new ring */
	CHECK(!ibv_resize_cq(ibv_cq_ex_to_cq(scq.cq), 1024), "ibv_resize_cq: %s",
	      strerror(errno));
	for (i = 0; i < NRESIZE; i++)
		take(&scq, 7000 + i, IBV_WC_RDMA_WRITE, lo, wlo);
	printf("ibv_poll_cq: %d WRITEs; resize with %d pending: timestamps kept\n", NPOLL,
	       NRESIZE);
	sync_step(2);
	sync_step(3);
	printf("%d ping-pongs on CQs without timestamps: %.1f us per round trip\n", NPING,
	       plain_pingpong(false, NPING) * 1e6);
}

/* a CQ's timestamps against its wallclock values: the same span, within the run */
static void check_span(struct tcq *t, uint64_t run_ns)
{
	int64_t d;
	uint64_t ts, w;

	if (!t->ts || !t->wall)
		return;
	ts = ticks_ns(t->prev_ts - t->first_ts);
	w = t->prev_wall - t->first_wall;
	d = (int64_t)(ts - w);
	CHECK(ts <= run_ns, "%s: timestamps span %llu ns, the run %llu ns", t->name,
	      (unsigned long long)ts, (unsigned long long)run_ns);
	CHECK(llabs(d) <= 1000000 + (int64_t)(w / 1000),
	      "%s: timestamps span %llu ns, wallclock %llu ns", t->name, (unsigned long long)ts,
	      (unsigned long long)w);
	printf("%s: %u completions, timestamps span %llu ns by hca_core_clock, wallclock %llu ns\n",
	       t->name, t->n, (unsigned long long)ts, (unsigned long long)w);
}

int main(int argc, char **argv)
{
	struct side_args a = { .dev = "tbrdma0", .port = 18610 };
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 128, .max_recv_wr = NPING,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	uint64_t m0;

	if (!side_args_parse(argc, argv, "cq_ts", &a)) {
		fprintf(stderr, "usage: cq_ts [-d DEV] [-g GID_INDEX] [-p PORT] "
			"server|client SERVER_IPV4\n");
		return 2;
	}
	m0 = clock_ns(CLOCK_MONOTONIC);
	ctx = open_device(a.dev);
	check_clock();
	refusals();
	snprintf(die_ctx, sizeof(die_ctx), "cq_ts %s", a.role);
	pd = ibv_alloc_pd(ctx);
	mem = calloc(1, sizeof(*mem));
	CHECK(pd && mem, "ibv_alloc_pd");
	mr = ibv_reg_mr(pd, mem, sizeof(*mem), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	tcq_make(&scq, a.server ? "CQ" : "send CQ", TS_FLAGS);
	if (a.server)
		rcq = scq;
	else
		tcq_make(&rcq, "recv CQ (wallclock only)",
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	CHECK(!rcq.cq->read_completion_ts == !rcq.ts,
	      "read_completion_ts %s without COMPLETION_TIMESTAMP",
	      rcq.ts ? "missing" : "set");
	qi.send_cq = ibv_cq_ex_to_cq(scq.cq);
	qi.recv_cq = ibv_cq_ex_to_cq(rcq.cq);
	qp = ibv_create_qp(pd, &qi);
	cq_plain = ibv_create_cq(ctx, 2 * NPING, NULL, NULL, 0);
	CHECK(qp && cq_plain, "ibv_create_qp/cq: %s", strerror(errno));
	qi.send_cq = qi.recv_cq = cq_plain;
	qp_plain = ibv_create_qp(pd, &qi);
	CHECK(qp_plain, "ibv_create_qp: %s", strerror(errno));
	to_init(qp);
	to_init(qp_plain);
	me.qpn = qp->qp_num;
	me.qpn_plain = qp_plain->qp_num;
	me.psn = a.server ? 0x2345 : 0x6789;
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)mem->wbuf;
	CHECK(!ibv_query_gid(ctx, 1, a.gid_index, &me.gid), "ibv_query_gid %d", a.gid_index);
	ctl_fd = a.server ? oob_server(a.port) : oob_client(a.host, a.port);
	oob_xfer(ctl_fd, &me, sizeof(me), true);
	oob_xfer(ctl_fd, &peer, sizeof(peer), false);
	rc_connect(qp, a.gid_index, peer.qpn, peer.psn, &peer.gid, me.psn);
	rc_connect(qp_plain, a.gid_index, peer.qpn_plain, peer.psn, &peer.gid, me.psn);
	if (a.server)
		server();
	else
		client();
	check_span(&scq, clock_ns(CLOCK_MONOTONIC) - m0);
	if (!a.server) {
		CHECK(rcq.n == NPING, "recv CQ: %u completions", rcq.n);
		printf("%s: %u completions, wallclock in order of posting\n", rcq.name, rcq.n);
	}
	printf("cq_ts %s: ok\n", a.role);
	return 0;
}
