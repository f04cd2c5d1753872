// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * badinput: IBTA-correct errors for bad input on a connected RC pair, one
 * case at a time, libibverbs only. Two processes:
 *
 *   badinput [-d DEV] [-g GID_INDEX] [-p PORT] server
 *   badinput [-d DEV] [-g GID_INDEX] [-p PORT] client HOST
 *
 * The client is the requester, the server the responder. They exchange QP
 * numbers, GIDs and the keys of four server MRs over TCP (normal; in another
 * PD; without REMOTE_WRITE; without REMOTE_READ) and keep the TCP connection
 * to run the cases in lockstep. Before every case both QPs go through RESET
 * and back to RTS (new PSNs), so each case starts from a clean connection
 * whatever the previous one did to it; the last case checks that traffic
 * still flows.
 *
 * Expected outcomes (IBTA 1.4 vol 1 ch. 9/10/11, as libibverbs exposes them):
 *   bad lkey / lkey past its MR / lkey of another PD
 *       requester IBV_WC_LOC_PROT_ERR, QP -> ERR, next WR IBV_WC_WR_FLUSH_ERR;
 *       nothing reaches the responder
 *   WRITE with an rkey of another PD, an unknown rkey, past the end of the
 *   MR, before its start, into an MR without REMOTE_WRITE; READ past the
 *   end, from an MR without REMOTE_READ
 *       requester IBV_WC_REM_ACCESS_ERR, QP -> ERR; responder QP -> ERR (its
 *       posted receive is flushed), target memory untouched
 *   WRITE to a QP without REMOTE_WRITE, READ from one without REMOTE_READ
 *   (the MR allows it)
 *       the same, with IBV_WC_REM_INV_REQ_ERR
 *   SEND into a receive WQE too small
 *       responder receive IBV_WC_LOC_LEN_ERR, QP -> ERR; requester
 *       IBV_WC_REM_INV_REQ_ERR
 *   post_send on a QP in RESET, INIT or RTR
 *       tbrdma (like every libibverbs provider that tracks the state) returns
 *       EINVAL at once with *bad_wr = the first WR, posting nothing
 *       (IBTA C10-? "Post Send ... in Reset/Init/RTR: immediate error");
 *       post_recv in RESET: EINVAL; post_send in ERR: accepted, completes
 *       with IBV_WC_WR_FLUSH_ERR
 *   more SGEs than max_send_sge/max_recv_sge, more inline bytes than
 *   max_inline_data, an unknown opcode
 *       ibv_post_send/recv returns an error (EINVAL or ENOMEM), *bad_wr
 *       points at the bad WR, the WRs before it are posted and complete, the
 *       ones after it are not posted
 *   SEND with no receive WQE and rnr_retry 0
 *       requester IBV_WC_RNR_RETRY_EXC_ERR
 *   responder gone (its QP in RESET), retry_cnt 2
 *       requester IBV_WC_RETRY_EXC_ERR
 *
 * Exit 0 when every case behaves; prints "FAIL: ..." and exits 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static const char *role = "?";
static int is_server, ctl_fd = -1;

/* ---- control channel ---------------------------------------------------- */

static void put64(uint64_t v) { oob_xfer(ctl_fd, &v, 8, 1); }
static uint64_t get64(void) { uint64_t v; oob_xfer(ctl_fd, &v, 8, 0); return v; }

/* both sides reach the same point */
static void barrier(uint64_t tag)
{
	uint64_t t;

	put64(tag);
	t = get64();
	CHECK(t == tag, "control channel out of step (%#llx vs %#llx)",
	      (unsigned long long)t, (unsigned long long)tag);
}

/* ---- verbs objects ------------------------------------------------------ */

enum { M_RW, M_PD2, M_NOWRITE, M_NOREAD, M_NUM };
#define MR_LEN	8192
#define CQ_WAIT_MS	10000

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qp;
static struct ibv_mr *mrs[M_NUM];
static uint8_t *bufs[M_NUM];
static struct ibv_qp_init_attr qcap;
static int gid_index;

struct remote_mr {
	uint64_t addr;
	uint32_t rkey, len;
};

static struct {
	uint32_t qpn;
	union ibv_gid gid;
	struct remote_mr mr[M_NUM];
} me, peer;

static void setup(const char *name)
{
	static const int acc[M_NUM] = {
		[M_RW] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		[M_PD2] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		[M_NOWRITE] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
		[M_NOREAD] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	int i;

	ctx = open_device(name);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd && pd2, "ibv_alloc_pd");
	for (i = 0; i < M_NUM; i++) {
		CHECK(!posix_memalign((void **)&bufs[i], 4096, MR_LEN), "no memory");
		memset(bufs[i], 0, MR_LEN);
		mrs[i] = ibv_reg_mr(i == M_PD2 ? pd2 : pd, bufs[i], MR_LEN, acc[i]);
		CHECK(mrs[i], "ibv_reg_mr %d: %s", i, strerror(errno));
		me.mr[i] = (struct remote_mr){ (uintptr_t)bufs[i], mrs[i]->rkey, MR_LEN };
	}
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(scq && rcq, "ibv_create_cq");
	qcap.send_cq = scq;
	qcap.recv_cq = rcq;
	qcap.qp_type = IBV_QPT_RC;
	qcap.cap.max_send_wr = 16;
	qcap.cap.max_recv_wr = 16;
	qcap.cap.max_send_sge = 2;
	qcap.cap.max_recv_sge = 2;
	qcap.cap.max_inline_data = 32;
	qp = ibv_create_qp(pd, &qcap);
	CHECK(qp, "ibv_create_qp: %s", strerror(errno));
	CHECK(qcap.cap.max_send_sge >= 2 && qcap.cap.max_send_sge < 16 &&
	      qcap.cap.max_recv_sge >= 2 && qcap.cap.max_recv_sge < 16,
	      "create_qp caps: max_send_sge %u max_recv_sge %u", qcap.cap.max_send_sge,
	      qcap.cap.max_recv_sge);
	me.qpn = qp->qp_num;
	CHECK(!ibv_query_gid(ctx, 1, gid_index, &me.gid), "ibv_query_gid %d", gid_index);
}

struct conn {
	int access;		/* qp_access_flags */
	uint8_t timeout, retry_cnt, rnr_retry;
};

static const struct conn conn_default = {
	IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 14, 7, 7,
};

static void modify(struct ibv_qp_attr *a, int mask, const char *what)
{
	int r = ibv_modify_qp(qp, a, mask);

	CHECK(!r, "modify_qp -> %s: %s", what, strerror(r));
}

static enum ibv_qp_state qp_state(void)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	CHECK(!ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), "ibv_query_qp");
	return a.qp_state;
}

static void to_reset(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	modify(&a, IBV_QP_STATE, "RESET");
}

static void to_init(const struct conn *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = c->access };

	modify(&a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	       "INIT");
}

/* PSNs: a fresh pair for every case, the same on both sides */
static uint32_t psn(int ncase, int server) { return (ncase * 0x31337 + server * 0x800000) & 0xffffff; }

static void to_rtr(int ncase)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a = { 0 };

	CHECK(!ibv_query_port(ctx, 1, &pa), "ibv_query_port");
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = psn(ncase, !is_server);
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;	/* 0.01 ms: RNR cases stay short */
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	modify(&a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");
}

static void to_rts(int ncase, const struct conn *c)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_RTS;
	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = c->rnr_retry;
	a.sq_psn = psn(ncase, is_server);
	a.max_rd_atomic = 4;
	modify(&a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

/* the next completion of @cq must be (@wr_id, @status) */
static void expect_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
		      const char *what)
{
	double end = now_s() + CQ_WAIT_MS / 1000.0;
	struct ibv_wc wc;
	int r;

	while (!(r = ibv_poll_cq(cq, 1, &wc))) {
		CHECK(now_s() < end, "%s: no completion within %d ms (want wr_id %llu %s)",
		      what, CQ_WAIT_MS, (unsigned long long)wr_id, ibv_wc_status_str(status));
		usleep(200);
	}
	CHECK(r == 1, "ibv_poll_cq: %d", r);
	CHECK(wc.wr_id == wr_id && wc.status == status,
	      "%s: got %s, want wr_id %llu status %s", what, wc_str(&wc),
	      (unsigned long long)wr_id, ibv_wc_status_str(status));
	printf("  %s %s: wr_id %llu %s\n", role, what, (unsigned long long)wr_id,
	       ibv_wc_status_str(wc.status));
}

/* no completion shows up on @cq for @ms */
static void expect_quiet(struct ibv_cq *cq, int ms, const char *what)
{
	double end = now_s() + ms / 1000.0;
	struct ibv_wc wc;
	int r;

	while (now_s() < end) {
		r = ibv_poll_cq(cq, 1, &wc);
		CHECK(r == 0, "%s: unexpected completion: %s", what, wc_str(&wc));
		usleep(1000);
	}
}

/* drain whatever a case left behind (reported, not judged) */
static void drain(void)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(scq, 1, &wc) == 1 || ibv_poll_cq(rcq, 1, &wc) == 1)
		;
}

static void expect_state(enum ibv_qp_state want, const char *what)
{
	double end = now_s() + CQ_WAIT_MS / 1000.0;
	enum ibv_qp_state s;

	while ((s = qp_state()) != want && now_s() < end)
		usleep(1000);
	CHECK(s == want, "%s: QP state %d, want %d", what, s, want);
}

static void post_recv(uint64_t wr_id, void *addr, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, mrs[M_RW]->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	int r = ibv_post_recv(qp, &wr, &bad);

	CHECK(!r, "ibv_post_recv: %s", strerror(r));
}

/* one signaled WR; returns ibv_post_send's result (bad_wr checked) */
static int post1(uint64_t wr_id, enum ibv_wr_opcode op, uint64_t laddr, uint32_t len,
		 uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { laddr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	int r;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	r = ibv_post_send(qp, &wr, &bad);
	CHECK(!r || bad == &wr, "post_send failed (%s) but bad_wr %p is not the WR",
	      strerror(r), (void *)bad);
	return r;
}

static void post1_ok(uint64_t wr_id, enum ibv_wr_opcode op, uint64_t laddr, uint32_t len,
		     uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	int r = post1(wr_id, op, laddr, len, lkey, raddr, rkey);

	CHECK(!r, "ibv_post_send: %s", strerror(r));
}

#define LBUF	((uintptr_t)bufs[M_RW])
#define LKEY	(mrs[M_RW]->lkey)

/* ---- cases -------------------------------------------------------------- */

/* local protection: the requester fails its own WR, the responder sees nothing */
static void local_prot(uint64_t laddr, uint32_t lkey)
{
	if (is_server) {
		post_recv(1, bufs[M_RW], 256);
		barrier(1);
		barrier(2);
		expect_quiet(rcq, 100, "responder");
		CHECK(qp_state() == IBV_QPS_RTS, "responder left RTS");
		return;
	}
	barrier(1);
	post1_ok(1, IBV_WR_SEND, laddr, 64, lkey, 0, 0);
	post1_ok(2, IBV_WR_SEND, LBUF, 64, LKEY, 0, 0);
	expect_wc(scq, 1, IBV_WC_LOC_PROT_ERR, "SEND");
	expect_wc(scq, 2, IBV_WC_WR_FLUSH_ERR, "next SEND");
	expect_quiet(scq, 50, "requester");
	expect_state(IBV_QPS_ERR, "requester");
	barrier(2);
}

static void case_bad_lkey(void) { local_prot(LBUF, LKEY ^ 0x5a); }
static void case_lkey_past_mr(void) { local_prot(LBUF + MR_LEN - 32, LKEY); }
static void case_lkey_other_pd(void) { local_prot((uintptr_t)bufs[M_PD2], mrs[M_PD2]->lkey); }

/*
 * Remote access: @op into the server's MR @m at @off (+@len), or with @rkey
 * when not 0. The requester gets @want, the responder goes to ERR
 * and flushes its posted receive; the target bytes stay as they were.
 */
static void remote_access2(enum ibv_wr_opcode op, int m, uint64_t off, uint32_t len,
			   uint32_t rkey, enum ibv_wc_status want)
{
	if (is_server) {
		memset(bufs[m], 0x33, MR_LEN);
		post_recv(7, bufs[M_RW], 256);
		barrier(1);
		barrier(2);
		expect_wc(rcq, 7, IBV_WC_WR_FLUSH_ERR, "posted receive");
		expect_state(IBV_QPS_ERR, "responder");
		for (uint32_t i = 0; i < MR_LEN; i++)
			CHECK(bufs[m][i] == 0x33, "target byte %u modified (%#x)", i, bufs[m][i]);
		return;
	}
	memset(bufs[M_RW], 0xcc, 4096);
	barrier(1);
	post1_ok(1, op, LBUF, len, LKEY, peer.mr[m].addr + off, rkey ? rkey : peer.mr[m].rkey);
	post1_ok(2, IBV_WR_SEND, LBUF, 8, LKEY, 0, 0);
	expect_wc(scq, 1, want, op == IBV_WR_RDMA_READ ? "READ" : "WRITE");
	expect_wc(scq, 2, IBV_WC_WR_FLUSH_ERR, "next SEND");
	expect_state(IBV_QPS_ERR, "requester");
	if (op == IBV_WR_RDMA_READ)
		for (int i = 0; i < 4096; i++)
			CHECK(bufs[M_RW][i] == 0xcc, "failed READ wrote local byte %d", i);
	barrier(2);
}

static void remote_access(enum ibv_wr_opcode op, int m, uint64_t off, uint32_t len,
			  uint32_t rkey)
{
	remote_access2(op, m, off, len, rkey, IBV_WC_REM_ACCESS_ERR);
}

static void case_write_rkey_other_pd(void) { remote_access(IBV_WR_RDMA_WRITE, M_PD2, 0, 64, 0); }
static void case_write_bad_rkey(void)
{
	remote_access(IBV_WR_RDMA_WRITE, M_RW, 0, 64, peer.mr[M_RW].rkey ^ 0x5a);
}
static void case_write_past_end(void) { remote_access(IBV_WR_RDMA_WRITE, M_RW, MR_LEN - 8, 16, 0); }
static void case_write_whole_past_end(void) { remote_access(IBV_WR_RDMA_WRITE, M_RW, MR_LEN, 1, 0); }
static void case_write_before_start(void)
{
	remote_access(IBV_WR_RDMA_WRITE, M_RW, (uint64_t)-8, 16, 0);
}
static void case_write_no_remote_write(void) { remote_access(IBV_WR_RDMA_WRITE, M_NOWRITE, 0, 64, 0); }
static void case_read_past_end(void) { remote_access(IBV_WR_RDMA_READ, M_RW, MR_LEN - 100, 4096, 0); }
static void case_read_no_remote_read(void) { remote_access(IBV_WR_RDMA_READ, M_NOREAD, 0, 64, 0); }
/*
 * The responder QP's own access flags (set by the conn of the case): IBTA's
 * responder checks list an operation the QP has not enabled as an invalid
 * request, and rxe answers so; so does tbrdma.
 */
static void case_write_qp_no_remote_write(void)
{
	remote_access2(IBV_WR_RDMA_WRITE, M_RW, 0, 64, 0, IBV_WC_REM_INV_REQ_ERR);
}

static void case_read_qp_no_remote_read(void)
{
	remote_access2(IBV_WR_RDMA_READ, M_RW, 0, 64, 0, IBV_WC_REM_INV_REQ_ERR);
}

static void case_recv_too_small(void)
{
	if (is_server) {
		post_recv(1, bufs[M_RW], 16);
		post_recv(2, bufs[M_RW] + 1024, 256);
		barrier(1);
		expect_wc(rcq, 1, IBV_WC_LOC_LEN_ERR, "receive of 16 B");
		expect_wc(rcq, 2, IBV_WC_WR_FLUSH_ERR, "next receive");
		expect_state(IBV_QPS_ERR, "responder");
		barrier(2);
		return;
	}
	barrier(1);
	post1_ok(1, IBV_WR_SEND, LBUF, 64, LKEY, 0, 0);
	expect_wc(scq, 1, IBV_WC_REM_INV_REQ_ERR, "SEND of 64 B");
	expect_state(IBV_QPS_ERR, "requester");
	barrier(2);
}

/* post_send in RESET, INIT, RTR: EINVAL at once; in ERR: a flush completion */
static void case_wrong_state(void)
{
	static const struct {
		enum ibv_qp_state s;
		const char *name;
	} st[] = { { IBV_QPS_RESET, "RESET" }, { IBV_QPS_INIT, "INIT" }, { IBV_QPS_RTR, "RTR" } };
	struct ibv_sge sge = { LBUF, 16, LKEY };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	unsigned int i;
	int r;

	barrier(1);	/* the peer is connected: nothing may reach it anyway */
	to_reset();
	for (i = 0; i < 3; i++) {
		if (st[i].s == IBV_QPS_INIT)
			to_init(&conn_default);
		if (st[i].s == IBV_QPS_RTR)
			to_rtr(0x7f);
		CHECK(qp_state() == st[i].s, "QP not in %s", st[i].name);
		r = post1(100 + i, IBV_WR_SEND, LBUF, 16, LKEY, 0, 0);
		CHECK(r == EINVAL, "post_send in %s returned %d (%s), want EINVAL", st[i].name,
		      r, strerror(r));
		r = post1(110 + i, IBV_WR_RDMA_WRITE, LBUF, 16, LKEY, peer.mr[M_RW].addr,
			  peer.mr[M_RW].rkey);
		CHECK(r == EINVAL, "RDMA WRITE in %s returned %d, want EINVAL", st[i].name, r);
		printf("  %s post_send in %s: EINVAL, bad_wr = the WR\n", role, st[i].name);
		if (st[i].s == IBV_QPS_RESET) {
			r = ibv_post_recv(qp, &rwr, &rbad);
			CHECK(r == EINVAL && rbad == &rwr,
			      "post_recv in RESET returned %d bad_wr %p, want EINVAL", r,
			      (void *)rbad);
		}
	}
	expect_quiet(scq, 50, "wrong-state posts");
	expect_quiet(rcq, 1, "wrong-state posts");
	modify(&a, IBV_QP_STATE, "ERR");
	post1_ok(120, IBV_WR_SEND, LBUF, 16, LKEY, 0, 0);
	expect_wc(scq, 120, IBV_WC_WR_FLUSH_ERR, "post_send in ERR");
	r = ibv_post_recv(qp, &rwr, &rbad);
	CHECK(!r, "post_recv in ERR: %s", strerror(r));
	expect_wc(rcq, 9, IBV_WC_WR_FLUSH_ERR, "post_recv in ERR");
	barrier(2);
}

/*
 * A chain [good, bad, good]: the call fails at the bad WR, the first one is
 * posted and completes, the third is not posted. @bad_kind: 0 too many
 * SGEs, 1 inline data over max_inline_data, 2 unknown opcode.
 */
static void chain_with_bad(int bad_kind)
{
	struct ibv_sge sge[17];
	struct ibv_send_wr wr[3], *bad = NULL;
	uint32_t n = bad_kind == 0 ? qcap.cap.max_send_sge + 1 : 1, i;
	int r;

	if (is_server) {
		post_recv(1, bufs[M_RW], 4096);
		post_recv(2, bufs[M_RW] + 4096, 4096);
		barrier(1);
		expect_wc(rcq, 1, IBV_WC_SUCCESS, "receive of the first WR");
		expect_quiet(rcq, 100, "receive of the WRs after the bad one");
		CHECK(qp_state() == IBV_QPS_RTS, "responder left RTS");
		barrier(2);
		return;
	}
	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){ LBUF + 16 * i, 16, LKEY };
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = i + 1;
		wr[i].sg_list = sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	if (bad_kind == 0) {
		wr[1].num_sge = n;
	} else if (bad_kind == 1) {
		sge[0].length = qcap.cap.max_inline_data + 1;
		wr[1].send_flags |= IBV_SEND_INLINE;
		sge[1] = (struct ibv_sge){ LBUF, 16, LKEY };
		wr[0].sg_list = wr[2].sg_list = &sge[1];
	} else {
		wr[1].opcode = (enum ibv_wr_opcode)0x55;
	}
	barrier(1);
	r = ibv_post_send(qp, wr, &bad);
	CHECK(r == EINVAL || r == ENOMEM, "post_send returned %d (%s), want EINVAL or ENOMEM",
	      r, strerror(r));
	CHECK(bad == &wr[1], "bad_wr %p is not the bad WR %p (wr[0] %p)", (void *)bad,
	      (void *)&wr[1], (void *)&wr[0]);
	printf("  %s post_send: %s, bad_wr = the bad WR\n", role, strerror(r));
	expect_wc(scq, 1, IBV_WC_SUCCESS, "the WR before the bad one");
	expect_quiet(scq, 100, "the WRs from the bad one on");
	CHECK(qp_state() == IBV_QPS_RTS, "requester left RTS");
	barrier(2);
}

static void case_too_many_send_sge(void) { chain_with_bad(0); }
static void case_inline_too_big(void) { chain_with_bad(1); }
static void case_bad_opcode(void) { chain_with_bad(2); }

static void case_too_many_recv_sge(void)
{
	struct ibv_sge sge[17];
	struct ibv_recv_wr wr[2], *bad = NULL;
	uint32_t n = qcap.cap.max_recv_sge + 1, i;
	int r;

	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){ LBUF + 64 * i, 64, LKEY };
	memset(wr, 0, sizeof(wr));
	wr[0] = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 1, .next = &wr[1] };
	wr[1] = (struct ibv_recv_wr){ .wr_id = 2, .sg_list = sge, .num_sge = n };
	r = ibv_post_recv(qp, wr, &bad);
	CHECK(r == EINVAL || r == ENOMEM, "post_recv with %u SGEs returned %d, want EINVAL", n, r);
	CHECK(bad == &wr[1], "bad_wr %p is not the bad WR %p", (void *)bad, (void *)&wr[1]);
	printf("  %s post_recv with %u SGEs: %s, bad_wr = the bad WR\n", role, n, strerror(r));
	/* the first one was posted: a SEND lands in it */
	if (is_server) {
		barrier(1);
		expect_wc(rcq, 1, IBV_WC_SUCCESS, "receive posted before the bad WR");
	} else {
		barrier(1);
		post1_ok(1, IBV_WR_SEND, LBUF, 16, LKEY, 0, 0);
		expect_wc(scq, 1, IBV_WC_SUCCESS, "SEND");
	}
	barrier(2);
}

static void case_rnr_retry_exc(void)
{
	if (is_server) {	/* no receive posted */
		barrier(1);
		barrier(2);
		expect_quiet(rcq, 10, "responder");
		return;
	}
	barrier(1);
	post1_ok(1, IBV_WR_SEND, LBUF, 16, LKEY, 0, 0);
	expect_wc(scq, 1, IBV_WC_RNR_RETRY_EXC_ERR, "SEND without a receive, rnr_retry 0");
	expect_state(IBV_QPS_ERR, "requester");
	barrier(2);
}

static void case_retry_exc(void)
{
	if (is_server) {	/* go deaf */
		to_reset();
		barrier(1);
		barrier(2);
		return;
	}
	barrier(1);
	post1_ok(1, IBV_WR_SEND, LBUF, 16, LKEY, 0, 0);
	expect_wc(scq, 1, IBV_WC_RETRY_EXC_ERR, "SEND to a QP in RESET, retry_cnt 2");
	expect_state(IBV_QPS_ERR, "requester");
	barrier(2);
}

/* after all that, traffic both ways still works */
static void case_sanity(void)
{
	uint8_t *b = bufs[M_RW];
	int i;

	if (is_server) {
		memset(b, 0, MR_LEN);
		for (i = 0; i < 2048; i++)
			b[4096 + i] = (uint8_t)(i * 7);
		post_recv(1, b + 6144, 64);
		barrier(1);
		expect_wc(rcq, 1, IBV_WC_SUCCESS, "SEND after the WRITE");
		for (i = 0; i < 1024; i++)
			CHECK(b[i] == (uint8_t)(i * 3), "WRITE data byte %d", i);
		barrier(2);
		return;
	}
	for (i = 0; i < 1024; i++)
		b[i] = (uint8_t)(i * 3);
	barrier(1);
	post1_ok(1, IBV_WR_RDMA_WRITE, LBUF, 1024, LKEY, peer.mr[M_RW].addr, peer.mr[M_RW].rkey);
	post1_ok(2, IBV_WR_RDMA_READ, LBUF + 2048, 2048, LKEY, peer.mr[M_RW].addr + 4096,
		 peer.mr[M_RW].rkey);
	post1_ok(3, IBV_WR_SEND, LBUF, 16, LKEY, 0, 0);
	expect_wc(scq, 1, IBV_WC_SUCCESS, "WRITE");
	expect_wc(scq, 2, IBV_WC_SUCCESS, "READ");
	expect_wc(scq, 3, IBV_WC_SUCCESS, "SEND");
	for (i = 0; i < 2048; i++)
		CHECK(b[2048 + i] == (uint8_t)(i * 7), "READ data byte %d", i);
	barrier(2);
}

struct tcase {
	const char *name;
	void (*fn)(void);
	const struct conn *conn;	/* NULL: conn_default */
};

#define RW (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
static const struct conn conn_ro = { IBV_ACCESS_REMOTE_READ, 14, 7, 7 };
static const struct conn conn_wo = { IBV_ACCESS_REMOTE_WRITE, 14, 7, 7 };
static const struct conn conn_rnr0 = { RW, 14, 7, 0 };
static const struct conn conn_retry2 = { RW, 8, 2, 7 };
static const struct tcase cases[] = {
	{ "sanity-first", case_sanity, NULL },
	{ "bad-lkey", case_bad_lkey, NULL },
	{ "lkey-past-mr", case_lkey_past_mr, NULL },
	{ "lkey-other-pd", case_lkey_other_pd, NULL },
	{ "write-rkey-other-pd", case_write_rkey_other_pd, NULL },
	{ "write-bad-rkey", case_write_bad_rkey, NULL },
	{ "write-past-end", case_write_past_end, NULL },
	{ "write-whole-past-end", case_write_whole_past_end, NULL },
	{ "write-before-start", case_write_before_start, NULL },
	{ "write-mr-no-remote-write", case_write_no_remote_write, NULL },
	{ "read-past-end", case_read_past_end, NULL },
	{ "read-mr-no-remote-read", case_read_no_remote_read, NULL },
	{ "write-qp-no-remote-write", case_write_qp_no_remote_write, &conn_ro },
	{ "read-qp-no-remote-read", case_read_qp_no_remote_read, &conn_wo },
	{ "recv-too-small", case_recv_too_small, NULL },
	{ "wrong-state", case_wrong_state, NULL },
	{ "too-many-send-sge", case_too_many_send_sge, NULL },
	{ "too-many-recv-sge", case_too_many_recv_sge, NULL },
	{ "inline-too-big", case_inline_too_big, NULL },
	{ "bad-opcode", case_bad_opcode, NULL },
	{ "rnr-retry-exceeded", case_rnr_retry_exc, &conn_rnr0 },
	{ "retry-exceeded", case_retry_exc, &conn_retry2 },
	{ "sanity-last", case_sanity, NULL },
};

static void usage(void)
{
	printf("usage: badinput [-d DEV] [-g GID_INDEX] [-p PORT] [-c CASE] server | client HOST\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = "tbrdma0", *only = NULL;
	int port = 18610, c, n = sizeof(cases) / sizeof(cases[0]), i, ran = 0;
	double t0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:g:p:c:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 'c': only = optarg; break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	is_server = !strcmp(argv[optind], "server");
	if (!is_server && (strcmp(argv[optind], "client") || optind + 1 >= argc))
		usage();
	role = is_server ? "server" : "client";
	snprintf(die_ctx, sizeof(die_ctx), "badinput %s: case setup", role);

	setup(dev);
	ctl_fd = is_server ? oob_server(port) : oob_client(argv[optind + 1], port);
	c = 1;
	setsockopt(ctl_fd, IPPROTO_TCP, TCP_NODELAY, &c, sizeof(c));
	oob_xfer(ctl_fd, &me, sizeof(me), 1);
	oob_xfer(ctl_fd, &peer, sizeof(peer), 0);
	printf("badinput %s: %s qpn %#x <-> %#x, max_send_sge %u max_recv_sge %u "
	       "max_inline %u\n", role, dev, me.qpn, peer.qpn, qcap.cap.max_send_sge,
	       qcap.cap.max_recv_sge, qcap.cap.max_inline_data);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		const struct conn *cn = cases[i].conn ? cases[i].conn : &conn_default;

		if (only && strcmp(only, cases[i].name) && strncmp(cases[i].name, "sanity", 6))
			continue;
		snprintf(die_ctx, sizeof(die_ctx), "badinput %s: case %s", role, cases[i].name);
		/* a clean connection: RESET, INIT, both RTR, both RTS */
		barrier(0x100 + i);
		to_reset();
		drain();
		to_init(cn);
		to_rtr(i);
		barrier(0x200 + i);
		to_rts(i, cn);
		barrier(0x300 + i);
		cases[i].fn();
		barrier(0x400 + i);
		drain();
		printf("ok %s\n", cases[i].name);
		ran++;
	}
	to_reset();
	barrier(0xffff);
	printf("badinput %s: %d cases ok in %.1f s\n", role, ran, now_s() - t0);
	return 0;
}
