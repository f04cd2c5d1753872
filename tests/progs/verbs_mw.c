// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_mw: memory windows through the provider, both ends on one device
 * (loopback RC QPs: "a" is the remote side, whose READ/WRITE/ATOMIC and
 * SEND_WITH_INV go through the transport to "b", which owns the memory and
 * binds the windows). Every result is checked, every wait bounded (5 s):
 * - the device advertises MEM_WINDOW and MEM_WINDOW_TYPE_2B;
 * - type 2, bound with ibv_post_send(IBV_WR_BIND_MW) and ibv_wr_bind_mw: a
 *   WRITE, READ and ATOMIC through the window's rkey reach the MR's memory,
 *   checked against the window's range and rights, not the MR's (an MR with
 *   no remote rights at all serves a writable window; outside the window but
 *   inside the MR: REM_ACCESS_ERR; a right the window lacks: REM_ACCESS_ERR);
 *   IBV_WR_LOCAL_INV and a received SEND_WITH_INV (IBV_WC_WITH_INV, the
 *   rkey reported) free it and its rkey is stale (REM_ACCESS_ERR); bound
 *   again with a new key, the new rkey works and the old one is stale;
 *   only its own QP invalidates it: on another QP of the PD a LOCAL_INV
 *   fails (LOC_QP_OP_ERR), a received SEND_WITH_INV is refused
 *   (REM_INV_REQ_ERR both sides) and the window stays bound; destroying
 *   its QP frees it (bound again without an invalidation) and its rkey
 *   serves no QP, not even a new one with the same QPN (made to come back
 *   with the module's test knob test_qpn_span: needs root);
 * - type 1, bound with ibv_bind_mw: usable from any QP of its PD; bound
 *   again (a new key) the old rkey is stale; a zero-length bind leaves no
 *   access; LOCAL_INV of its rkey fails (LOC_QP_OP_ERR);
 * - bad input: an MR without IBV_ACCESS_MW_BIND, a window of another PD, a
 *   range outside the MR, a writable window on an MR without LOCAL_WRITE, a
 *   bound type 2 window bound again, a zero-length type 2 bind: MW_BIND_ERR;
 *   a type 1 window through ibv_post_send, a type 2 through ibv_bind_mw, a
 *   zero-based window, an MR of another PD for ibv_bind_mw, a bad window
 *   type: refused at the call; a window's rkey as an lkey: LOC_PROT_ERR;
 * - a bound window deallocated, and a window whose MR was deregistered:
 *   the rkey is refused (REM_ACCESS_ERR).
 * usage: verbs_mw [DEVICE]   (default tbrdma0; needs an IPv4 address on its
 * netdev). One line per case; FAIL: ... and exit 1 on any mismatch.
 *
 * Across two devices (hosts): verbs_mw DEVICE server, and verbs_mw DEVICE
 * client SERVER_IPV4 (a TCP control channel on port MW_PORT): the server
 * binds a type 2 window (IBV_WR_BIND_MW) and a type 1 (ibv_bind_mw), the
 * client WRITEs, READs and runs an ATOMIC through them (the server checks
 * its memory), invalidates the type 2 one with SEND_WITH_INV (the server's
 * receive reports it), the server binds it again with a new key, which
 * works, and the previous rkey is refused (REM_ACCESS_ERR).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define BUF 8192
#define MW_PORT 18533
#define RIGHTS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_context *ctx;
static union ibv_gid gid;
static int gid_index;

/* a loopback RC pair on one PD: a is the remote side, b binds windows */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *bx;		/* b's ibv_wr_* API */
	char *src;			/* a's local buffer */
	struct ibv_mr *src_mr;
};

static struct ibv_qp *make_qp(struct pair *p, bool ex)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = p->cq, .recv_cq = p->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .pd = p->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = RIGHTS };
	struct ibv_qp *qp;

	if (ex) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_BIND_MW |
				    IBV_QP_EX_WITH_LOCAL_INV |
				    IBV_QP_EX_WITH_SEND_WITH_INV;
	}
	qp = ibv_create_qp_ex(ctx, &ia);
	CHECK(qp, "ibv_create_qp_ex: %s", strerror(errno));
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "-> INIT");
	return qp;
}

static void drain(struct pair *p)
{
	struct ibv_wc w;

	while (ibv_poll_cq(p->cq, 1, &w) > 0)
		;
}

/* the pair's PD, CQ and a's registered buffer, made once */
static void pair_init(struct pair *p, struct ibv_pd *pd)
{
	p->pd = pd;
	p->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(p->cq, "ibv_create_cq");
	p->src = calloc(1, BUF);
	CHECK(p->src, "calloc");
	p->src_mr = ibv_reg_mr(pd, p->src, BUF, IBV_ACCESS_LOCAL_WRITE);
	CHECK(p->src_mr, "ibv_reg_mr src: %s", strerror(errno));
}

/* new connected QPs on @pd (after an error completion the old ones are in
 * ERROR); the CQ and a's buffer are made once */
static void pair_up(struct pair *p, struct ibv_pd *pd)
{
	if (p->a) {
		CHECK(!ibv_destroy_qp(p->a) && !ibv_destroy_qp(p->b), "destroy_qp");
		drain(p);
	} else {
		pair_init(p, pd);
	}
	p->a = make_qp(p, false);
	p->b = make_qp(p, true);
	p->bx = ibv_qp_to_qp_ex(p->b);
	CHECK(p->bx, "ibv_qp_to_qp_ex");
	rc_connect(p->a, gid_index, p->b->qp_num, 0x200, &gid, 0x100);
	rc_connect(p->b, gid_index, p->a->qp_num, 0x100, &gid, 0x200);
}

enum { WR_BIND = 1, WR_INV, WR_RDMA, WR_SEND, WR_RECV };

/* a posts @op of @len bytes between its src and @raddr/@rkey */
static void rdma(struct pair *p, enum ibv_wr_opcode op, uint64_t raddr,
		 uint32_t rkey, uint32_t len, enum ibv_wc_status status,
		 const char *what)
{
	struct ibv_sge s = { .addr = (uintptr_t)p->src, .length = len,
			     .lkey = p->src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_RDMA, .sg_list = &s, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED },
		*bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	CHECK(!ibv_post_send(p->a, &wr, &bad), "%s: ibv_post_send", what);
	poll_wc_for(p->cq, WR_RDMA, status, what);
}

static void bind_info(struct ibv_mw_bind_info *bi, struct ibv_mr *mr,
		      void *addr, uint64_t len, unsigned int access)
{
	bi->mr = mr;
	bi->addr = (uintptr_t)addr;
	bi->length = len;
	bi->mw_access_flags = access;
}

/* b binds type 2 window @mw with ibv_post_send: its new rkey */
static uint32_t bind2(struct pair *p, struct ibv_mw *mw, struct ibv_mr *mr,
		      void *addr, uint64_t len, unsigned int access,
		      enum ibv_wc_status status, const char *what)
{
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr wr = { .wr_id = WR_BIND, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc w;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	bind_info(&wr.bind_mw.bind_info, mr, addr, len, access);
	CHECK(!ibv_post_send(p->b, &wr, &bad), "%s: ibv_post_send BIND_MW: %s",
	      what, strerror(errno));
	w = poll_wc_for(p->cq, WR_BIND, status, what);
	if (status == IBV_WC_SUCCESS) {
		CHECK(w.opcode == IBV_WC_BIND_MW, "%s: opcode %d, not BIND_MW",
		      what, w.opcode);
		mw->rkey = rkey;	/* the consumer keeps a type 2 rkey */
	}
	return rkey;
}

/* the same with the ibv_wr_* API */
static uint32_t bind2_wr(struct pair *p, struct ibv_mw *mw, struct ibv_mr *mr,
			 void *addr, uint64_t len, unsigned int access,
			 const char *what)
{
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_mw_bind_info bi;
	int ret;

	bind_info(&bi, mr, addr, len, access);
	ibv_wr_start(p->bx);
	p->bx->wr_id = WR_BIND;
	p->bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(p->bx, mw, rkey, &bi);
	ret = ibv_wr_complete(p->bx);
	CHECK(!ret, "%s: ibv_wr_complete: %s", what, strerror(ret));
	poll_wc_for(p->cq, WR_BIND, IBV_WC_SUCCESS, what);
	mw->rkey = rkey;
	return rkey;
}

/* b posts LOCAL_INV of @rkey */
static void local_inv(struct pair *p, uint32_t rkey, enum ibv_wc_status status,
		      const char *what)
{
	struct ibv_send_wr wr = { .wr_id = WR_INV, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;
	struct ibv_wc w;

	CHECK(!ibv_post_send(p->b, &wr, &bad), "%s: ibv_post_send LOCAL_INV", what);
	w = poll_wc_for(p->cq, WR_INV, status, what);
	CHECK(status != IBV_WC_SUCCESS || w.opcode == IBV_WC_LOCAL_INV,
	      "%s: opcode %d, not LOCAL_INV", what, w.opcode);
}

/* a sends SEND_WITH_INV of @rkey to b, whose receive reports it */
static void send_inv(struct pair *p, uint32_t rkey, const char *what)
{
	struct ibv_sge rs = { .addr = (uintptr_t)p->src + BUF / 2, .length = 64,
			      .lkey = p->src_mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = WR_RECV, .sg_list = &rs, .num_sge = 1 },
		*rbad;
	struct ibv_sge s = { .addr = (uintptr_t)p->src, .length = 16,
			     .lkey = p->src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_SEND, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;
	struct ibv_wc w;

	CHECK(!ibv_post_recv(p->b, &rwr, &rbad), "%s: ibv_post_recv", what);
	CHECK(!ibv_post_send(p->a, &wr, &bad), "%s: ibv_post_send SEND_WITH_INV",
	      what);
	poll_wc_for(p->cq, WR_SEND, IBV_WC_SUCCESS, what);
	w = poll_wc_for(p->cq, WR_RECV, IBV_WC_SUCCESS, what);
	CHECK((w.wc_flags & IBV_WC_WITH_INV) && w.invalidated_rkey == rkey,
	      "%s: receive flags %#x rkey %#x, expected WITH_INV %#x", what,
	      w.wc_flags, w.invalidated_rkey, rkey);
}

/*
 * a sends SEND_WITH_INV of @rkey to b, which must refuse to invalidate it:
 * REM_INV_REQ_ERR on both sides (IBTA class J; the QPs go to ERROR)
 */
static void send_inv_refused(struct pair *p, uint32_t rkey, const char *what)
{
	struct ibv_sge rs = { .addr = (uintptr_t)p->src + BUF / 2, .length = 64,
			      .lkey = p->src_mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = WR_RECV, .sg_list = &rs, .num_sge = 1 },
		*rbad;
	struct ibv_sge s = { .addr = (uintptr_t)p->src, .length = 16,
			     .lkey = p->src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_SEND, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;

	CHECK(!ibv_post_recv(p->b, &rwr, &rbad), "%s: ibv_post_recv", what);
	CHECK(!ibv_post_send(p->a, &wr, &bad), "%s: ibv_post_send SEND_WITH_INV",
	      what);
	poll_wc_for(p->cq, WR_SEND, IBV_WC_REM_INV_REQ_ERR, what);
	poll_wc_for(p->cq, WR_RECV, IBV_WC_REM_INV_REQ_ERR, what);
}

static void expect_bytes(const char *b, char c, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(b[i] == c, "%s: byte %zu is %#x, expected %#x", what, i,
		      (unsigned char)b[i], (unsigned char)c);
}

static struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, type);

	CHECK(mw, "ibv_alloc_mw type %d: %s", type, strerror(errno));
	return mw;
}

#define QPN_SPAN_FILE "/sys/module/tbrdma/parameters/test_qpn_span"
#define QPN_SPAN 64

/* user QPNs from the first @n only (tbrdma's test knob), 0: all */
static void set_qpn_span(unsigned int n)
{
	FILE *f = fopen(QPN_SPAN_FILE, "w");

	CHECK(f, "%s: %s (run as root, tbrdma loaded)", QPN_SPAN_FILE,
	      strerror(errno));
	fprintf(f, "%u\n", n);
	CHECK(!fclose(f), "%s: %s", QPN_SPAN_FILE, strerror(errno));
}

/*
 * A type 2 window bound on a QP that is then destroyed must not serve the
 * next QP that gets the same number. QPNs are allocated cyclically from 16M,
 * so the number is made to come back with the test knob: QPNs from the
 * first QPN_SPAN only, QPs created and destroyed until one has it.
 * @buf: zeroes, inside @mr (remote rights, MW_BIND).
 */
static void qpn_reuse(struct ibv_pd *pd, struct ibv_mr *mr, char *buf)
{
	struct pair r = { 0 };
	struct ibv_mw *w;
	struct ibv_qp *q = NULL;
	uint32_t rk, qpn;
	int i;

	set_qpn_span(QPN_SPAN);
	pair_up(&r, pd);
	w = alloc_mw(pd, IBV_MW_TYPE_2);
	rk = bind2(&r, w, mr, buf, 64, RIGHTS, IBV_WC_SUCCESS,
		   "bind before its QPN comes back");
	qpn = r.b->qp_num;
	CHECK(!ibv_destroy_qp(r.b) && !ibv_destroy_qp(r.a), "destroy_qp");
	for (i = 0; i < 4 * QPN_SPAN; i++) {
		q = make_qp(&r, true);
		if (q->qp_num == qpn)
			break;
		CHECK(!ibv_destroy_qp(q), "destroy_qp");
		q = NULL;
	}
	CHECK(q, "QPN %#x did not come back in %d QPs (test_qpn_span %d)", qpn,
	      4 * QPN_SPAN, QPN_SPAN);
	r.b = q;
	r.a = make_qp(&r, false);
	drain(&r);
	rc_connect(r.a, gid_index, r.b->qp_num, 0x200, &gid, 0x100);
	rc_connect(r.b, gid_index, r.a->qp_num, 0x100, &gid, 0x200);
	memset(r.src, 'q', 64);
	rdma(&r, IBV_WR_RDMA_WRITE, (uintptr_t)buf, rk, 64, IBV_WC_REM_ACCESS_ERR,
	     "write through a window of a destroyed QP, its QPN reused");
	expect_bytes(buf, 0, 64, "write through a window of a destroyed QP");
	set_qpn_span(0);
	printf("type 2: a destroyed QP's window, its QPN %#x back on a new QP "
	       "(after %d QPs): REM_ACCESS_ERR\n", qpn, i + 1);
	CHECK(!ibv_destroy_qp(r.a) && !ibv_destroy_qp(r.b), "destroy_qp");
	drain(&r);
	CHECK(!ibv_dealloc_mw(w), "dealloc_mw");
	CHECK(!ibv_dereg_mr(r.src_mr) && !ibv_destroy_cq(r.cq), "dereg, destroy_cq");
	free(r.src);
}

/* ---- across two devices ------------------------------------------------ */

/* what the server tells the client after each bind */
struct mw_keys {
	uint64_t addr;		/* the server's buffer */
	uint32_t rk2, rk1;	/* the type 2 and type 1 windows' rkeys */
	uint32_t old2;		/* the type 2 window's previous rkey, or 0 */
	uint32_t pad;
};

static void sync_step(int fd, uint32_t step, bool out)
{
	uint32_t v = step;

	oob_xfer(fd, &v, sizeof(v), out);
	CHECK(v == step, "control channel: step %u, expected %u", v, step);
}

/* one RC QP of the side's own, connected to the peer's over @fd */
static void remote_connect(struct pair *p, struct ibv_pd *pd, int fd, bool server)
{
	struct { uint32_t qpn, psn; union ibv_gid gid; } me, peer;
	struct ibv_qp *qp;

	pair_init(p, pd);
	if (server) {
		qp = p->b = make_qp(p, true);
		p->bx = ibv_qp_to_qp_ex(p->b);
	} else {
		qp = p->a = make_qp(p, false);
	}
	me.qpn = qp->qp_num;
	me.psn = server ? 0x300 : 0x400;
	me.gid = gid;
	if (server) {
		oob_xfer(fd, &me, sizeof(me), true);
		oob_xfer(fd, &peer, sizeof(peer), false);
	} else {
		oob_xfer(fd, &peer, sizeof(peer), false);
		oob_xfer(fd, &me, sizeof(me), true);
	}
	rc_connect(qp, gid_index, peer.qpn, peer.psn, &peer.gid, me.psn);
}

static int remote_server(struct ibv_pd *pd)
{
	struct pair p = { 0 };
	struct ibv_mw_bind mb = { .wr_id = WR_BIND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr rwr = { .wr_id = WR_RECV, .num_sge = 1 }, *rbad;
	struct ibv_sge rs;
	struct mw_keys k = { 0 };
	struct ibv_mw *mw2, *mw1;
	struct ibv_mr *mr;
	uint64_t *counter;
	struct ibv_wc w;
	char *buf;
	int fd, ret;

	snprintf(die_ctx, sizeof(die_ctx), "verbs_mw server");
	buf = calloc(1, BUF);
	CHECK(buf, "calloc");
	mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	mw2 = alloc_mw(pd, IBV_MW_TYPE_2);
	mw1 = alloc_mw(pd, IBV_MW_TYPE_1);
	fd = oob_server(MW_PORT);
	remote_connect(&p, pd, fd, true);
	memset(buf + 4096, 'r', 1024);
	counter = (uint64_t *)(buf + 2048);
	*counter = 1000;
	k.addr = (uintptr_t)buf;
	k.rk2 = bind2(&p, mw2, mr, buf + 1024, 2048, RIGHTS, IBV_WC_SUCCESS,
		      "type 2 bind");
	bind_info(&mb.bind_info, mr, buf + 4096, 1024, IBV_ACCESS_REMOTE_READ);
	ret = ibv_bind_mw(p.b, mw1, &mb);
	CHECK(!ret, "ibv_bind_mw: %s", strerror(ret));
	poll_wc_for(p.cq, WR_BIND, IBV_WC_SUCCESS, "type 1 bind");
	k.rk1 = mw1->rkey;
	oob_xfer(fd, &k, sizeof(k), true);
	printf("server: type 2 window %#x, type 1 window %#x bound\n", k.rk2, k.rk1);

	sync_step(fd, 1, false);	/* the client wrote, read, added */
	expect_bytes(buf + 1024, 'w', 1024, "remote write through the type 2 window");
	CHECK(*counter == 1000 + 5, "remote atomic: counter %llu, expected 1005",
	      (unsigned long long)*counter);
	expect_bytes(buf, 0, 1024, "before the type 2 window");
	rs = (struct ibv_sge){ .addr = (uintptr_t)p.src, .length = 64,
			       .lkey = p.src_mr->lkey };
	rwr.sg_list = &rs;
	CHECK(!ibv_post_recv(p.b, &rwr, &rbad), "ibv_post_recv");
	sync_step(fd, 2, true);		/* the client may SEND_WITH_INV */
	w = poll_wc_for(p.cq, WR_RECV, IBV_WC_SUCCESS, "SEND_WITH_INV received");
	CHECK((w.wc_flags & IBV_WC_WITH_INV) && w.invalidated_rkey == k.rk2,
	      "receive flags %#x rkey %#x, expected WITH_INV %#x", w.wc_flags,
	      w.invalidated_rkey, k.rk2);
	printf("server: SEND_WITH_INV of %#x received\n", k.rk2);
	k.old2 = k.rk2;
	k.rk2 = bind2(&p, mw2, mr, buf + 1024, 2048, RIGHTS, IBV_WC_SUCCESS,
		      "type 2 bound again");
	oob_xfer(fd, &k, sizeof(k), true);
	sync_step(fd, 3, false);	/* the client is done */
	expect_bytes(buf + 1024 + 1024, 'v', 1024, "write with the new rkey");
	printf("verbs_mw server: ok\n");
	return 0;
}

static int remote_client(struct ibv_pd *pd, const char *host)
{
	struct pair p = { 0 };
	struct ibv_sge s;
	struct ibv_send_wr wr = { .wr_id = WR_SEND, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct mw_keys k;
	int fd;

	snprintf(die_ctx, sizeof(die_ctx), "verbs_mw client");
	fd = oob_client(host, MW_PORT);
	remote_connect(&p, pd, fd, false);
	oob_xfer(fd, &k, sizeof(k), false);
	memset(p.src, 'w', BUF);
	rdma(&p, IBV_WR_RDMA_WRITE, k.addr + 1024, k.rk2, 1024, IBV_WC_SUCCESS,
	     "write through the type 2 window");
	rdma(&p, IBV_WR_RDMA_READ, k.addr + 4096, k.rk1, 1024, IBV_WC_SUCCESS,
	     "read through the type 1 window");
	expect_bytes(p.src, 'r', 1024, "read through the type 1 window");
	rdma(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, k.addr + 2048, k.rk2, 8,
	     IBV_WC_SUCCESS, "atomic through the type 2 window");
	CHECK(*(uint64_t *)p.src == 1000, "atomic fetched %llu, expected 1000",
	      (unsigned long long)*(uint64_t *)p.src);
	printf("client: WRITE, READ (type 1), ATOMIC through the windows\n");
	sync_step(fd, 1, true);
	sync_step(fd, 2, false);
	s = (struct ibv_sge){ .addr = (uintptr_t)p.src, .length = 16,
			      .lkey = p.src_mr->lkey };
	wr.invalidate_rkey = k.rk2;
	CHECK(!ibv_post_send(p.a, &wr, &bad), "ibv_post_send SEND_WITH_INV");
	poll_wc_for(p.cq, WR_SEND, IBV_WC_SUCCESS, "SEND_WITH_INV");
	oob_xfer(fd, &k, sizeof(k), false);
	CHECK(k.old2 && k.rk2 != k.old2, "the server's new key");
	memset(p.src, 'v', BUF);
	rdma(&p, IBV_WR_RDMA_WRITE, k.addr + 2048, k.rk2, 1024, IBV_WC_SUCCESS,
	     "write with the new rkey");
	rdma(&p, IBV_WR_RDMA_WRITE, k.addr + 1024, k.old2, 8,
	     IBV_WC_REM_ACCESS_ERR, "write with the invalidated rkey");
	printf("client: SEND_WITH_INV, rebound: new rkey works, old REM_ACCESS_ERR\n");
	sync_step(fd, 3, true);
	printf("verbs_mw client: ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr attr;
	struct pair p1 = { 0 }, p3 = { 0 };
	struct ibv_pd *pd1, *pd2;
	struct ibv_mr *mr, *mr_local, *mr_nobind, *mr_ro, *mr_pd2, *mr_gone;
	struct ibv_mw *mw, *mw1, *mw_pd2, *mw_gone, *mwq;
	struct ibv_mw_bind mb = { 0 };
	struct ibv_send_wr wr = { 0 }, *bad;
	uint32_t rk, old;
	char *buf, *lbuf, *gbuf;
	uint64_t *counter;
	int ret;

	snprintf(die_ctx, sizeof(die_ctx), "verbs_mw");
	ctx = open_device(argc > 1 ? argv[1] : "tbrdma0");
	gid_index = find_v4_gid(ctx, &gid);
	CHECK(!ibv_query_device(ctx, &attr), "ibv_query_device");
	CHECK((attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
	      attr.max_mw > 0, "device_cap_flags %#x max_mw %d: no memory windows",
	      attr.device_cap_flags, attr.max_mw);
	pd1 = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd1 && pd2, "ibv_alloc_pd");
	if (argc > 2 && !strcmp(argv[2], "server"))
		return remote_server(pd1);
	if (argc > 3 && !strcmp(argv[2], "client"))
		return remote_client(pd1, argv[3]);
	pair_up(&p1, pd1);
	buf = calloc(1, BUF);
	lbuf = calloc(1, BUF);
	gbuf = calloc(1, BUF);
	CHECK(buf && lbuf && gbuf, "calloc");
	mr = ibv_reg_mr(pd1, buf, BUF, IBV_ACCESS_LOCAL_WRITE | RIGHTS |
			IBV_ACCESS_MW_BIND);
	/* no remote rights of its own: only windows give them */
	mr_local = ibv_reg_mr(pd1, lbuf, BUF, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_MW_BIND);
	mr_nobind = ibv_reg_mr(pd1, gbuf, BUF, IBV_ACCESS_LOCAL_WRITE | RIGHTS);
	CHECK(mr && mr_local && mr_nobind, "ibv_reg_mr: %s", strerror(errno));
	printf("caps: MEM_WINDOW, MEM_WINDOW_TYPE_2B, max_mw %d\n", attr.max_mw);

	/*
	 * A type 2 window is invalidated only through the QP it is bound on:
	 * on another QP of its PD, LOCAL_INV fails (LOC_QP_OP_ERR, as a failed
	 * LOCAL_INV in rxe) and a received SEND_WITH_INV is refused
	 * (REM_INV_REQ_ERR both sides), and the window stays bound.
	 */
	mwq = alloc_mw(pd1, IBV_MW_TYPE_2);
	rk = bind2(&p1, mwq, mr, buf, BUF, RIGHTS, IBV_WC_SUCCESS,
		   "bind for another QP's invalidation");
	pair_up(&p3, pd1);
	local_inv(&p3, rk, IBV_WC_LOC_QP_OP_ERR,
		  "LOCAL_INV of a type 2 window on another QP of its PD");
	pair_up(&p3, pd1);
	send_inv_refused(&p3, rk, "SEND_WITH_INV of a type 2 window received on "
			 "another QP of its PD");
	pair_up(&p3, pd1);
	memset(p1.src, 'i', BUF);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf, rk, 64, IBV_WC_SUCCESS,
	     "write through the window after another QP's invalidations");
	expect_bytes(buf, 'i', 64, "write after another QP's invalidations");
	local_inv(&p1, rk, IBV_WC_SUCCESS, "LOCAL_INV on the window's own QP");
	memset(buf, 0, BUF);
	printf("type 2: invalidation on another QP of its PD: LOCAL_INV "
	       "LOC_QP_OP_ERR, SEND_WITH_INV REM_INV_REQ_ERR, still bound; on its "
	       "own QP: ok\n");

	/*
	 * Destroying the QP a type 2 window is bound on frees the window: its
	 * rkey serves no QP, not even one that gets the same QPN, and it can be
	 * bound again (a free window) without an invalidation.
	 */
	rk = bind2(&p1, mwq, mr, buf, BUF, RIGHTS, IBV_WC_SUCCESS,
		   "bind before destroy_qp");
	pair_up(&p1, pd1);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf, rk, 8, IBV_WC_REM_ACCESS_ERR,
	     "write through a window of a destroyed QP");
	pair_up(&p1, pd1);
	local_inv(&p1, rk, IBV_WC_LOC_QP_OP_ERR,
		  "LOCAL_INV of a window of a destroyed QP on a new QP");
	pair_up(&p1, pd1);
	qpn_reuse(pd1, mr, buf);
	rk = bind2(&p1, mwq, mr, buf, BUF, RIGHTS, IBV_WC_SUCCESS,
		   "bind again once its QP was destroyed");
	local_inv(&p1, rk, IBV_WC_SUCCESS, "LOCAL_INV after the new bind");
	expect_bytes(buf, 0, BUF, "refused writes through windows of destroyed QPs");
	CHECK(!ibv_dealloc_mw(mwq), "dealloc_mw");
	printf("type 2: its QP destroyed: the rkey REM_ACCESS_ERR, LOCAL_INV "
	       "LOC_QP_OP_ERR, the window free to bind again\n");

	/* type 2 on an MR without remote rights: the window's rights count */
	mw = alloc_mw(pd1, IBV_MW_TYPE_2);
	rk = bind2(&p1, mw, mr_local, lbuf + 1024, 2048,
		   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		   IBV_WC_SUCCESS, "type 2 bind");
	CHECK(rk >> 8 == mw->rkey >> 8, "type 2 bind: rkey index changed");
	memset(p1.src, 'a', BUF);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)lbuf + 1024, rk, 2048,
	     IBV_WC_SUCCESS, "write through a type 2 window");
	expect_bytes(lbuf + 1024, 'a', 2048, "write through a type 2 window");
	expect_bytes(lbuf, 0, 1024, "before the window");
	expect_bytes(lbuf + 3072, 0, BUF - 3072, "after the window");
	memset(lbuf + 2048, 'r', 512);
	rdma(&p1, IBV_WR_RDMA_READ, (uintptr_t)lbuf + 2048, rk, 512,
	     IBV_WC_SUCCESS, "read through a type 2 window");
	expect_bytes(p1.src, 'r', 512, "read through a type 2 window");
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)lbuf + 1024, mr_local->rkey, 64,
	     IBV_WC_REM_ACCESS_ERR, "write with the MR's own rkey (no rights)");
	pair_up(&p1, pd1);
	printf("type 2: bound on an MR without remote rights; WRITE/READ through it, "
	       "the MR's rkey REM_ACCESS_ERR\n");

	/* the window's range and rights, not the MR's (destroying its QP in
	 * pair_up freed the window: it is bound again at once) */
	rk = bind2(&p1, mw, mr, buf + 1024, 2048, IBV_ACCESS_REMOTE_WRITE,
		   IBV_WC_SUCCESS, "type 2 bind on a new QP");
	memset(p1.src, 'b', BUF);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 2048 + 512, rk, 1024,
	     IBV_WC_REM_ACCESS_ERR, "write past the window's end (inside the MR)");
	expect_bytes(buf, 0, BUF, "refused write past the window");
	pair_up(&p1, pd1);
	rk = bind2(&p1, mw, mr, buf + 1024, 2048, IBV_ACCESS_REMOTE_WRITE,
		   IBV_WC_SUCCESS, "type 2 bind, write only");
	rdma(&p1, IBV_WR_RDMA_READ, (uintptr_t)buf + 1024, rk, 64,
	     IBV_WC_REM_ACCESS_ERR, "read through a write-only window");
	pair_up(&p1, pd1);
	rk = bind2(&p1, mw, mr, buf + 1024, 2048, IBV_ACCESS_REMOTE_READ,
		   IBV_WC_SUCCESS, "type 2 bind, read only");
	rdma(&p1, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)buf + 1024, rk, 8,
	     IBV_WC_REM_ACCESS_ERR, "atomic through a window without ATOMIC");
	pair_up(&p1, pd1);
	printf("type 2: past the window (inside the MR), READ on write-only, ATOMIC "
	       "without the right: REM_ACCESS_ERR\n");

	/* ATOMIC, then local invalidation: the rkey is stale */
	rk = bind2_wr(&p1, mw, mr, buf + 4096, 64, RIGHTS, "ibv_wr_bind_mw");
	counter = (uint64_t *)(buf + 4096 + 8);
	*counter = 37;
	rdma(&p1, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)counter, rk, 8,
	     IBV_WC_SUCCESS, "atomic through the window");
	CHECK(*(uint64_t *)p1.src == 37 && *counter == 42,
	      "atomic: fetched %llu, now %llu (37, 42 expected)",
	      (unsigned long long)*(uint64_t *)p1.src,
	      (unsigned long long)*counter);
	local_inv(&p1, rk, IBV_WC_SUCCESS, "LOCAL_INV of a type 2 window");
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 4096, rk, 8,
	     IBV_WC_REM_ACCESS_ERR, "write with the invalidated rkey");
	pair_up(&p1, pd1);
	local_inv(&p1, rk, IBV_WC_LOC_QP_OP_ERR, "LOCAL_INV of a free window");
	pair_up(&p1, pd1);
	printf("type 2: ibv_wr_bind_mw, ATOMIC through it; LOCAL_INV: stale rkey "
	       "REM_ACCESS_ERR, again LOC_QP_OP_ERR\n");

	/* a new key, then remote invalidation */
	old = rk;
	rk = bind2(&p1, mw, mr, buf, BUF, RIGHTS, IBV_WC_SUCCESS, "rebind, new key");
	CHECK(rk != old, "rebind: same rkey");
	memset(p1.src, 'b', BUF);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf, rk, 256, IBV_WC_SUCCESS,
	     "write with the new rkey");
	expect_bytes(buf, 'b', 256, "write with the new rkey");
	bind2(&p1, mw, mr, buf, BUF, RIGHTS, IBV_WC_MW_BIND_ERR,
	      "bind a bound type 2 window");
	pair_up(&p1, pd1);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf, old, 8, IBV_WC_REM_ACCESS_ERR,
	     "write with the previous rkey");
	pair_up(&p1, pd1);
	/* type 2 windows serve the QP they were bound on: bind on this one
	 * (freed when the QP it was bound on was destroyed) */
	rk = bind2(&p1, mw, mr, buf, BUF, RIGHTS, IBV_WC_SUCCESS, "bind for SEND_WITH_INV");
	send_inv(&p1, rk, "SEND_WITH_INV");
	rdma(&p1, IBV_WR_RDMA_READ, (uintptr_t)buf, rk, 8, IBV_WC_REM_ACCESS_ERR,
	     "read after SEND_WITH_INV");
	pair_up(&p1, pd1);
	bind2(&p1, mw, mr, buf, 0, RIGHTS, IBV_WC_MW_BIND_ERR,
	      "zero-length type 2 bind");
	pair_up(&p1, pd1);
	printf("type 2: rebind with a new key (old REM_ACCESS_ERR), bound twice "
	       "MW_BIND_ERR, SEND_WITH_INV (WITH_INV, rkey), zero length MW_BIND_ERR\n");

	/* a type 2 window serves only the QP it was bound on */
	rk = bind2(&p1, mw, mr, buf, BUF, RIGHTS, IBV_WC_SUCCESS, "bind on p1");
	pair_up(&p3, pd1);
	rdma(&p3, IBV_WR_RDMA_WRITE, (uintptr_t)buf, rk, 8, IBV_WC_REM_ACCESS_ERR,
	     "write to another QP of the PD through a type 2 window");
	pair_up(&p3, pd1);
	printf("type 2: another QP of the PD: REM_ACCESS_ERR\n");

	/* type 1 with ibv_bind_mw: any QP of the PD */
	mw1 = alloc_mw(pd1, IBV_MW_TYPE_1);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf, mw1->rkey, 8,
	     IBV_WC_REM_ACCESS_ERR, "write through an unbound type 1 window");
	pair_up(&p1, pd1);
	mb.wr_id = WR_BIND;
	mb.send_flags = IBV_SEND_SIGNALED;
	bind_info(&mb.bind_info, mr, buf + 512, 1024, IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ);
	old = mw1->rkey;
	ret = ibv_bind_mw(p1.b, mw1, &mb);
	CHECK(!ret, "ibv_bind_mw: %s", strerror(ret));
	CHECK(mw1->rkey != old, "ibv_bind_mw: rkey unchanged");
	poll_wc_for(p1.cq, WR_BIND, IBV_WC_SUCCESS, "type 1 bind");
	memset(p3.src, 'c', BUF);
	rdma(&p3, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 512, mw1->rkey, 1024,
	     IBV_WC_SUCCESS, "write through a type 1 window from another QP");
	expect_bytes(buf + 512, 'c', 1024, "write through a type 1 window");
	old = mw1->rkey;
	bind_info(&mb.bind_info, mr, buf + 4096, 1024, IBV_ACCESS_REMOTE_READ);
	ret = ibv_bind_mw(p1.b, mw1, &mb);
	CHECK(!ret, "ibv_bind_mw again: %s", strerror(ret));
	poll_wc_for(p1.cq, WR_BIND, IBV_WC_SUCCESS, "type 1 bound again");
	rdma(&p3, IBV_WR_RDMA_READ, (uintptr_t)buf + 4096, mw1->rkey, 1024,
	     IBV_WC_SUCCESS, "read through the rebound type 1 window");
	rdma(&p3, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 512, old, 8,
	     IBV_WC_REM_ACCESS_ERR, "write with the type 1 window's old rkey");
	pair_up(&p3, pd1);
	bind_info(&mb.bind_info, NULL, NULL, 0, 0);
	ret = ibv_bind_mw(p1.b, mw1, &mb);
	CHECK(!ret, "ibv_bind_mw zero length: %s", strerror(ret));
	poll_wc_for(p1.cq, WR_BIND, IBV_WC_SUCCESS, "zero-length type 1 bind");
	rdma(&p3, IBV_WR_RDMA_READ, (uintptr_t)buf + 4096, mw1->rkey, 8,
	     IBV_WC_REM_ACCESS_ERR, "read through a zero-length type 1 window");
	pair_up(&p3, pd1);
	local_inv(&p1, mw1->rkey, IBV_WC_LOC_QP_OP_ERR, "LOCAL_INV of a type 1 window");
	pair_up(&p1, pd1);
	printf("type 1: ibv_bind_mw, used from another QP, rebound (old rkey "
	       "REM_ACCESS_ERR), zero length (no access), LOCAL_INV LOC_QP_OP_ERR\n");

	/* bad binds: a completion with MW_BIND_ERR */
	mr_ro = ibv_reg_mr(pd1, gbuf, BUF, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	mr_pd2 = ibv_reg_mr(pd2, gbuf, BUF, IBV_ACCESS_LOCAL_WRITE | RIGHTS |
			    IBV_ACCESS_MW_BIND);
	CHECK(mr_ro && mr_pd2, "ibv_reg_mr: %s", strerror(errno));
	bind2(&p1, mw, mr_nobind, gbuf, 64, IBV_ACCESS_REMOTE_READ,
	      IBV_WC_MW_BIND_ERR, "MR without IBV_ACCESS_MW_BIND");
	pair_up(&p1, pd1);
	bind2(&p1, mw, mr, buf, BUF + 1, IBV_ACCESS_REMOTE_READ,
	      IBV_WC_MW_BIND_ERR, "range past the MR");
	pair_up(&p1, pd1);
	bind2(&p1, mw, mr_ro, gbuf, 64, IBV_ACCESS_REMOTE_WRITE,
	      IBV_WC_MW_BIND_ERR, "writable window on an MR without LOCAL_WRITE");
	pair_up(&p1, pd1);
	bind2(&p1, mw, mr_pd2, gbuf, 64, IBV_ACCESS_REMOTE_READ,
	      IBV_WC_MW_BIND_ERR, "MR of another PD");
	pair_up(&p1, pd1);
	mw_pd2 = alloc_mw(pd2, IBV_MW_TYPE_2);
	bind2(&p1, mw_pd2, mr, buf, 64, IBV_ACCESS_REMOTE_READ,
	      IBV_WC_MW_BIND_ERR, "window of another PD");
	pair_up(&p1, pd1);
	printf("bad binds: no MW_BIND, past the MR, writable without LOCAL_WRITE, "
	       "MR or window of another PD: MW_BIND_ERR\n");

	/* refused at the call */
	wr.wr_id = WR_BIND;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw1;
	wr.bind_mw.rkey = ibv_inc_rkey(mw1->rkey);
	bind_info(&wr.bind_mw.bind_info, mr, buf, 64, IBV_ACCESS_REMOTE_READ);
	CHECK(ibv_post_send(p1.b, &wr, &bad) == EINVAL,
	      "type 1 window through ibv_post_send not refused");
	wr.bind_mw.mw = mw;
	wr.bind_mw.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
	CHECK(ibv_post_send(p1.b, &wr, &bad) == EINVAL,
	      "zero-based window not refused");
	bind_info(&mb.bind_info, mr, buf, 64, IBV_ACCESS_REMOTE_READ);
	CHECK(ibv_bind_mw(p1.b, mw, &mb) == EINVAL,
	      "type 2 window through ibv_bind_mw not refused");
	bind_info(&mb.bind_info, mr_pd2, gbuf, 64, IBV_ACCESS_REMOTE_READ);
	CHECK(ibv_bind_mw(p1.b, mw1, &mb) == EPERM,
	      "ibv_bind_mw with an MR of another PD not refused");
	errno = 0;
	CHECK(!ibv_alloc_mw(pd1, (enum ibv_mw_type)3) && errno,
	      "ibv_alloc_mw type 3 not refused");
	printf("refused at the call: type 1 via post_send, zero-based, type 2 via "
	       "ibv_bind_mw (EINVAL), MR of another PD (EPERM), type 3 (%s)\n",
	       strerror(errno));

	/* a window's rkey is no lkey */
	rk = bind2(&p1, mw, mr, buf, BUF, RIGHTS, IBV_WC_SUCCESS, "bind for lkey");
	{
		struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 16, .lkey = rk };
		struct ibv_send_wr sw = { .wr_id = WR_SEND, .sg_list = &s,
					  .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED };

		sw.wr.rdma.remote_addr = (uintptr_t)buf;
		sw.wr.rdma.rkey = mr->rkey;
		CHECK(!ibv_post_send(p1.b, &sw, &bad), "post with a window lkey");
		poll_wc_for(p1.cq, WR_SEND, IBV_WC_LOC_PROT_ERR, "window rkey as lkey");
	}
	pair_up(&p1, pd1);
	printf("a window's rkey as an lkey: LOC_PROT_ERR\n");

	/* a bound window deallocated; a window whose MR is deregistered */
	rk = bind2(&p1, mw, mr, buf, BUF, RIGHTS, IBV_WC_SUCCESS, "bind before dealloc");
	rdma(&p1, IBV_WR_RDMA_READ, (uintptr_t)buf, rk, 8, IBV_WC_SUCCESS,
	     "read before dealloc");
	CHECK(!ibv_dealloc_mw(mw), "ibv_dealloc_mw of a bound window: %s",
	      strerror(errno));
	rdma(&p1, IBV_WR_RDMA_READ, (uintptr_t)buf, rk, 8, IBV_WC_REM_ACCESS_ERR,
	     "read through a deallocated window");
	pair_up(&p1, pd1);
	mr_gone = ibv_reg_mr(pd1, gbuf, BUF, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_MW_BIND);
	CHECK(mr_gone, "ibv_reg_mr: %s", strerror(errno));
	mw_gone = alloc_mw(pd1, IBV_MW_TYPE_2);
	rk = bind2(&p1, mw_gone, mr_gone, gbuf, BUF, IBV_ACCESS_REMOTE_READ,
		   IBV_WC_SUCCESS, "bind before dereg_mr");
	rdma(&p1, IBV_WR_RDMA_READ, (uintptr_t)gbuf, rk, 8, IBV_WC_SUCCESS,
	     "read before dereg_mr");
	CHECK(!ibv_dereg_mr(mr_gone), "ibv_dereg_mr with a bound window: %s",
	      strerror(errno));
	rdma(&p1, IBV_WR_RDMA_READ, (uintptr_t)gbuf, rk, 8, IBV_WC_REM_ACCESS_ERR,
	     "read through a window whose MR is gone");
	pair_up(&p1, pd1);
	printf("dealloc of a bound window, dereg of its MR: the rkey REM_ACCESS_ERR\n");

	CHECK(!ibv_dealloc_mw(mw_gone) && !ibv_dealloc_mw(mw_pd2), "dealloc_mw");
	CHECK(!ibv_destroy_qp(p1.a) && !ibv_destroy_qp(p1.b) &&
	      !ibv_destroy_qp(p3.a) && !ibv_destroy_qp(p3.b), "destroy_qp");
	CHECK(!ibv_dereg_mr(mr) && !ibv_dereg_mr(mr_local) &&
	      !ibv_dereg_mr(mr_nobind) && !ibv_dereg_mr(mr_ro) &&
	      !ibv_dereg_mr(mr_pd2), "dereg_mr");
	CHECK(!ibv_dereg_mr(p1.src_mr) && !ibv_dereg_mr(p3.src_mr), "dereg src");
	CHECK(!ibv_destroy_cq(p1.cq) && !ibv_destroy_cq(p3.cq), "destroy_cq");
	CHECK(!ibv_dealloc_mw(mw1), "dealloc_mw type 1");
	CHECK(!ibv_dealloc_pd(pd1) && !ibv_dealloc_pd(pd2), "dealloc_pd");
	CHECK(!ibv_close_device(ctx), "close_device");
	printf("verbs_mw: ok\n");
	return 0;
}
