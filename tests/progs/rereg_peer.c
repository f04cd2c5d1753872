// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rereg_peer - ibv_rereg_mr with the peer on another host (issue 50).
 *
 *   rereg_peer [-d DEV] [-g GID_INDEX] [-p PORT] server
 *   rereg_peer [-d DEV] [-g GID_INDEX] [-p PORT] client SERVER_IPV4
 *
 * The server owns one MR and does what the client tells it over the TCP
 * control channel (reregister, fill or check its buffers, post and reap
 * receives, make a new RC QP); the client drives every case and issues the
 * RDMA WRITEs, READs and SENDs from its own host:
 * - access: a MR without REMOTE_WRITE refuses a WRITE (REM_ACCESS_ERR);
 *   IBV_REREG_MR_CHANGE_ACCESS adds it: a WRITE with the key rereg returned
 *   lands, the old key is refused (REM_ACCESS_ERR), nothing written by it;
 * - translation: a new buffer; WRITE, READ and SEND (a receive posted with
 *   the new lkey) reach it, the old buffer stays as it was, the old rkey is
 *   refused;
 * - PD: a QP of the new PD takes WRITE and SEND, one of the old PD is
 *   refused (REM_ACCESS_ERR);
 * - all three flags at once;
 * - bad flags and bad input: IBV_REREG_MR_ERR_INPUT/_CMD, errno, the MR
 *   and its keys unchanged and still honoured by the peer;
 * - races: WRITEs stream to the MR while the server reregisters it
 *   (translation to another buffer; access without REMOTE_WRITE; fresh
 *   pages mapped at the MR's own addresses, then a translation to that same
 *   range): every completion is SUCCESS until one REM_ACCESS_ERR, then
 *   WR_FLUSH_ERR; the new memory never holds a byte of them; afterwards
 *   the new key works.
 * Each side prints "rereg_peer SIDE: ok" and exits 0, or "FAIL: ..." and 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#define BUF	(64 * 1024)
#define NBUF	4		/* server buffers: 0 .. 3 */
#define RACE_WR	16		/* WRITEs in flight in the race */

enum cmd { C_LINK = 1, C_REREG, C_FILL, C_EXPECT, C_RECV, C_RECV_WAIT, C_RESTATE,
	   C_DRAIN, C_QUIT };

struct req {
	uint32_t cmd;
	uint32_t link;		/* which QP (0: pd1, 1: pd2) */
	uint32_t flags;		/* C_REREG */
	uint32_t pd;		/* C_REREG: 0 NULL, 1 pd1, 2 pd2 */
	uint32_t buf;		/* buffer index */
	uint32_t off, len;
	int32_t access;		/* C_REREG; C_FILL/C_EXPECT: the byte */
	uint32_t qpn, psn;	/* C_LINK: the client's QP */
	int32_t status;		/* C_RECV_WAIT: expected */
	uint32_t remap;		/* C_REREG: first new pages at buffer @buf's address */
};

struct rep {
	int32_t ret, err;
	uint32_t lkey, rkey;
	uint64_t addr, length;
	uint32_t qpn, psn;
	char why[96];
};

static const char *role = "?";
static struct ibv_context *ctx;
static struct ibv_pd *pd1, *pd2;
static struct ibv_cq *cq;
static struct ibv_qp *qp[2];
static int ctl_fd = -1, gid_index;
static union ibv_gid gid, peer_gid;
static char *buf[NBUF];
static uint32_t peer_qpn[2], peer_psn[2], my_psn[2];

static void to_init(struct ibv_qp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };

	CHECK(!ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "-> INIT");
}

/* the QP of @link back from ERROR as rdma-core's tests do: RESET, INIT, RTR, RTS */
static void restate(uint32_t link)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	CHECK(!ibv_modify_qp(qp[link], &a, IBV_QP_STATE), "-> RESET");
	to_init(qp[link]);
	rc_connect(qp[link], gid_index, peer_qpn[link], peer_psn[link], &peer_gid,
		   my_psn[link]);
}

/* every completion on the CQ: how many, their statuses in @why */
static int drain(char *why, size_t n)
{
	struct ibv_wc w;
	int c = 0, l = 0;

	why[0] = 0;
	while (ibv_poll_cq(cq, 1, &w) > 0) {
		c++;
		if (l < (int)n)
			l += snprintf(why + l, n - l, "%s%s", c > 1 ? ", " : "",
				      ibv_wc_status_str(w.status));
	}
	return c;
}

static struct ibv_qp *new_qp(struct ibv_pd *pd)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *q = ibv_create_qp(pd, &ia);
	struct ibv_wc w;

	CHECK(q, "ibv_create_qp: %s", strerror(errno));
	to_init(q);
	while (ibv_poll_cq(cq, 1, &w) > 0)	/* an old QP's flushed WRs */
		;
	return q;
}

/* ---- server: the MR's owner ---------------------------------------------- */

static struct ibv_mr *mr;

static struct ibv_pd *pd_of(uint32_t i)
{
	return i == 1 ? pd1 : i == 2 ? pd2 : NULL;
}

static void serve(void)
{
	struct req q;
	struct rep r;
	uint32_t i;

	for (;;) {
		oob_xfer(ctl_fd, &q, sizeof(q), false);
		memset(&r, 0, sizeof(r));
		switch (q.cmd) {
		case C_LINK:
			if (qp[q.link])
				CHECK(!ibv_destroy_qp(qp[q.link]), "destroy_qp");
			qp[q.link] = new_qp(q.link ? pd2 : pd1);
			r.qpn = qp[q.link]->qp_num;
			r.psn = 0x1000 + q.link;
			peer_qpn[q.link] = q.qpn;
			peer_psn[q.link] = q.psn;
			my_psn[q.link] = r.psn;
			rc_connect(qp[q.link], gid_index, q.qpn, q.psn, &peer_gid, r.psn);
			break;
		case C_RESTATE:
			restate(q.link);
			break;
		case C_DRAIN:
			r.qpn = drain(r.why, sizeof(r.why));
			break;
		case C_REREG:
			/* the MR still holds the old pages; the address gets new ones */
			CHECK(!q.remap || mmap(buf[q.buf], BUF, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
					       -1, 0) == buf[q.buf], "mmap MAP_FIXED: %s",
			      strerror(errno));
			errno = 0;
			r.ret = ibv_rereg_mr(mr, q.flags, pd_of(q.pd),
					     q.buf < NBUF ? buf[q.buf] + q.off :
						(void *)(uintptr_t)q.off,
					     q.len, q.access);
			r.err = errno;
			break;
		case C_FILL:
			memset(buf[q.buf] + q.off, q.access, q.len);
			break;
		case C_EXPECT:
			for (i = 0; i < q.len; i++)
				if (buf[q.buf][q.off + i] != (char)q.access) {
					snprintf(r.why, sizeof(r.why),
						 "buffer %u byte %u is %#x, expected %#x",
						 q.buf, q.off + i,
						 (unsigned char)buf[q.buf][q.off + i],
						 (unsigned char)q.access);
					r.ret = -1;
					break;
				}
			break;
		case C_RECV: {
			struct ibv_sge s = { .addr = (uintptr_t)buf[q.buf] + q.off,
					     .length = q.len, .lkey = mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = 0x100 + q.link, .sg_list = &s,
						  .num_sge = 1 }, *bad;

			r.ret = ibv_post_recv(qp[q.link], &wr, &bad);
			break;
		}
		case C_RECV_WAIT: {
			struct ibv_wc w = poll_wc_for(cq, 0x100 + q.link, q.status,
						      "server receive");

			r.length = w.byte_len;
			break;
		}
		case C_QUIT:
			return;
		default:
			die("unknown command %u", q.cmd);
		}
		r.lkey = mr->lkey;
		r.rkey = mr->rkey;
		r.addr = (uintptr_t)mr->addr;
		if (!r.length)
			r.length = mr->length;
		oob_xfer(ctl_fd, &r, sizeof(r), true);
	}
}

/* ---- client: drives the cases --------------------------------------------- */

static char *src;
static struct ibv_mr *src_mr;
static struct rep cur;		/* the server MR as last reported */
static uint64_t saddr[NBUF];	/* the server's buffer addresses */

static struct rep call(struct req q)
{
	struct rep r;

	oob_xfer(ctl_fd, &q, sizeof(q), true);
	oob_xfer(ctl_fd, &r, sizeof(r), false);
	CHECK(q.cmd == C_REREG || !r.ret, "server: command %u failed: %s", q.cmd,
	      r.why[0] ? r.why : strerror(r.err));
	cur = r;
	return r;
}

/* a new RC QP on both ends of @link (the old ones go: errors leave them in ERROR) */
static void link_up(uint32_t link)
{
	struct req q = { .cmd = C_LINK, .link = link, .psn = 0x2000 + link };
	struct rep r;

	if (qp[link])
		CHECK(!ibv_destroy_qp(qp[link]), "destroy_qp");
	qp[link] = new_qp(pd1);
	q.qpn = qp[link]->qp_num;
	r = call(q);
	peer_qpn[link] = r.qpn;
	peer_psn[link] = r.psn;
	my_psn[link] = q.psn;
	rc_connect(qp[link], gid_index, r.qpn, r.psn, &peer_gid, q.psn);
}

static void fill(uint32_t b, uint32_t off, uint32_t len, char c)
{
	call((struct req){ .cmd = C_FILL, .buf = b, .off = off, .len = len, .access = c });
}

static void expect(uint32_t b, uint32_t off, uint32_t len, char c, const char *what)
{
	struct req q = { .cmd = C_EXPECT, .buf = b, .off = off, .len = len, .access = c };
	struct rep r;

	oob_xfer(ctl_fd, &q, sizeof(q), true);
	oob_xfer(ctl_fd, &r, sizeof(r), false);
	CHECK(!r.ret, "%s: server %s", what, r.why);
}

static void post_rdma(uint32_t link, enum ibv_wr_opcode op, uint64_t wr_id,
		      uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge s = { .addr = (uintptr_t)src, .length = len, .lkey = src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = raddr, .rkey = rkey } },
		*bad;

	CHECK(!ibv_post_send(qp[link], &wr, &bad), "ibv_post_send: %s", strerror(errno));
}

/* one WRITE/READ/SEND of @len bytes on @link, completing with @status */
static void op(uint32_t link, enum ibv_wr_opcode o, uint64_t raddr, uint32_t rkey,
	       uint32_t len, enum ibv_wc_status status, const char *what)
{
	post_rdma(link, o, 1, raddr, rkey, len);
	poll_wc_for(cq, 1, status, what);
}

static void write_ok(uint32_t link, uint32_t b, char c, const char *what)
{
	memset(src, c, BUF);
	op(link, IBV_WR_RDMA_WRITE, saddr[b], cur.rkey, BUF, IBV_WC_SUCCESS, what);
	expect(b, 0, BUF, c, what);
}

static void read_ok(uint32_t link, uint32_t b, char c, const char *what)
{
	uint32_t i;

	fill(b, 0, BUF, c);
	memset(src, 0, BUF);
	op(link, IBV_WR_RDMA_READ, saddr[b], cur.rkey, BUF, IBV_WC_SUCCESS, what);
	for (i = 0; i < BUF; i++)
		CHECK(src[i] == c, "%s: byte %u read %#x, expected %#x", what, i,
		      (unsigned char)src[i], (unsigned char)c);
}

/* the server receives 4 KiB into buffer @b (its MR's current lkey) on @link */
static void send_ok(uint32_t link, uint32_t b, char c, const char *what)
{
	struct rep r;

	call((struct req){ .cmd = C_RECV, .link = link, .buf = b, .len = 4096 });
	memset(src, c, 4096);
	op(link, IBV_WR_SEND, 0, 0, 4096, IBV_WC_SUCCESS, what);
	r = call((struct req){ .cmd = C_RECV_WAIT, .link = link, .status = IBV_WC_SUCCESS });
	CHECK(r.length == 4096, "%s: received %llu bytes", what, (unsigned long long)r.length);
	expect(b, 0, 4096, c, what);
}

/* a WRITE of 64 bytes with @rkey to @raddr on @link is refused; new QPs after */
static void write_refused(uint32_t link, uint64_t raddr, uint32_t rkey, const char *what)
{
	memset(src, '!', 64);
	op(link, IBV_WR_RDMA_WRITE, raddr, rkey, 64, IBV_WC_REM_ACCESS_ERR, what);
	link_up(link);
}

/*
 * after a rereg to buffer @b, with the keys it returned: a WRITE of @c[0]
 * (checked at the server), a READ of the buffer filled with @c[2] at the
 * server, then a SEND of @c[1] into its first 4 KiB (the rest stays @c[2])
 */
static void traffic_ok(uint32_t link, uint32_t b, const char *c, const char *after)
{
	char what[96];

	snprintf(what, sizeof(what), "write after %s", after);
	write_ok(link, b, c[0], what);
	snprintf(what, sizeof(what), "read after %s", after);
	read_ok(link, b, c[2], what);
	snprintf(what, sizeof(what), "send after %s", after);
	send_ok(link, b, c[1], what);
}

static void rereg(uint32_t flags, uint32_t pd, uint32_t b, int access, const char *what)
{
	struct rep old = cur, r;

	r = call((struct req){ .cmd = C_REREG, .flags = flags, .pd = pd, .buf = b,
			       .len = BUF, .access = access });
	CHECK(!r.ret, "%s: ibv_rereg_mr returned %d: %s", what, r.ret, strerror(r.err));
	CHECK(r.lkey != old.lkey && r.rkey != old.rkey, "%s: keys unchanged", what);
	CHECK(!(flags & IBV_REREG_MR_CHANGE_TRANSLATION) ||
	      (r.addr == saddr[b] && r.length == BUF), "%s: mr addr/length", what);
}

static void rereg_bad(uint32_t flags, uint32_t pd, uint32_t b, int access,
		      int ret, int err, const char *what)
{
	struct rep old = cur, r;

	r = call((struct req){ .cmd = C_REREG, .flags = flags, .pd = pd, .buf = b,
			       .len = BUF, .access = access });
	CHECK(r.ret == ret && r.err == err, "%s: ibv_rereg_mr returned %d errno %d (%s), expected %d errno %d",
	      what, r.ret, r.err, strerror(r.err), ret, err);
	CHECK(r.lkey == old.lkey && r.rkey == old.rkey && r.addr == old.addr &&
	      r.length == old.length, "%s: the MR changed", what);
	printf("bad input: %s: %d, errno %s\n", what, r.ret, strerror(err));
}

/*
 * WRITEs of 4 KiB to buffer @b stream with the current rkey, RACE_WR in
 * flight; once 8 completed the server reregisters (@flags, to buffer @nb,
 * @access) while they go on. Every completion must be SUCCESS until the
 * first REM_ACCESS_ERR (the old key refused), then WR_FLUSH_ERR. Returns
 * how many landed.
 */
static unsigned int race(uint32_t b, uint32_t flags, uint32_t nb, bool remap,
			 int access, const char *what)
{
	struct req q = { .cmd = C_REREG, .flags = flags, .buf = nb, .len = BUF,
			 .access = access, .remap = remap };
	unsigned int posted = 0, done = 0, ok = 0, refused = 0;
	uint32_t rkey = cur.rkey;
	double end = now_s() + 20;
	bool sent = false;
	struct ibv_wc w;
	struct rep r;
	int n;

	memset(src, 'r', 4096);
	while (done < posted || !refused) {
		while (!refused && posted - done < RACE_WR) {
			post_rdma(0, IBV_WR_RDMA_WRITE, posted,
				  saddr[b] + (posted % (BUF / 4096)) * 4096, rkey, 4096);
			posted++;
		}
		n = ibv_poll_cq(cq, 1, &w);
		CHECK(n >= 0, "%s: ibv_poll_cq", what);
		CHECK(now_s() < end, "%s: %u posted, %u done, %u ok: stuck", what,
		      posted, done, ok);
		if (!n)
			continue;
		CHECK(w.wr_id == done, "%s: completion out of order: %s (expected wr_id %u)",
		      what, wc_str(&w), done);
		done++;
		if (!refused && w.status == IBV_WC_SUCCESS)
			ok++;
		else if (!refused && w.status == IBV_WC_REM_ACCESS_ERR)
			refused = 1;
		else
			CHECK(refused && w.status == IBV_WC_WR_FLUSH_ERR,
			      "%s: %s after %u ok", what, wc_str(&w), ok);
		if (ok == 8 && !sent) {
			oob_xfer(ctl_fd, &q, sizeof(q), true);
			sent = true;
		}
	}
	CHECK(sent, "%s: refused before the rereg (%u ok)", what, ok);
	oob_xfer(ctl_fd, &r, sizeof(r), false);
	CHECK(!r.ret && r.rkey != rkey, "%s: ibv_rereg_mr returned %d: %s", what, r.ret,
	      strerror(r.err));
	cur = r;
	printf("%s: %u WRITEs landed, then REM_ACCESS_ERR, %u flushed\n", what, ok,
	       posted - ok - 1);
	link_up(0);
	return ok;
}

static void client_recv(uint32_t len)
{
	struct ibv_sge s = { .addr = (uintptr_t)src + BUF - len, .length = len,
			     .lkey = src_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &s, .num_sge = 1 }, *bad;

	CHECK(!ibv_post_recv(qp[0], &wr, &bad), "ibv_post_recv: %s", strerror(errno));
}

static void restate_flow(void)
{
	char why[96];
	struct rep r;
	int n;

	call((struct req){ .cmd = C_RECV, .link = 0, .buf = 2, .len = 4096 });
	rereg(IBV_REREG_MR_CHANGE_TRANSLATION, 0, 1, 0, "restate: translation");
	client_recv(64);
	memset(src, 'k', 4096);
	op(0, IBV_WR_SEND, 0, 0, 4096, IBV_WC_REM_OP_ERR,
	   "restate: send to a receive with the old lkey");
	poll_wc_for(cq, 2, IBV_WC_WR_FLUSH_ERR, "restate: our receive");
	r = call((struct req){ .cmd = C_DRAIN });
	CHECK(r.qpn == 1 && !strcmp(r.why, ibv_wc_status_str(IBV_WC_LOC_PROT_ERR)),
	      "restate: server completions: %u (%s), expected one local protection error",
	      r.qpn, r.why);
	restate(0);
	call((struct req){ .cmd = C_RESTATE, .link = 0 });
	n = drain(why, sizeof(why));
	CHECK(!n, "restate: %d stray completions after RESET: %s", n, why);
	r = call((struct req){ .cmd = C_DRAIN });
	CHECK(!r.qpn, "restate: %u stray server completions after RESET: %s", r.qpn, r.why);
	send_ok(0, 1, 'K', "restate: send after RESET -> RTS");
	write_ok(0, 1, 'L', "restate: write after RESET -> RTS");
	expect(2, 0, 4096, 'Z', "restate: old buffer");
	printf("restate: stale-lkey receive REM_OP_ERR, RESET -> RTS, then send/write with the new keys\n");
}

static void client(void)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;
	struct rep old;

	src = malloc(BUF);
	CHECK(src, "malloc");
	src_mr = ibv_reg_mr(pd1, src, BUF, IBV_ACCESS_LOCAL_WRITE);
	CHECK(src_mr, "ibv_reg_mr: %s", strerror(errno));
	link_up(0);
	link_up(1);
	cur = call((struct req){ .cmd = C_FILL, .len = 0 });

	/* access: REMOTE_WRITE added */
	memset(src, 'A', BUF);
	op(0, IBV_WR_RDMA_WRITE, saddr[0], cur.rkey, BUF, IBV_WC_REM_ACCESS_ERR,
	   "write without REMOTE_WRITE");
	expect(0, 0, BUF, 0, "write without REMOTE_WRITE");
	link_up(0);
	old = cur;
	rereg(IBV_REREG_MR_CHANGE_ACCESS, 0, 0, rw, "access +REMOTE_WRITE");
	traffic_ok(0, 0, "ASa", "access +REMOTE_WRITE");
	write_refused(0, saddr[0], old.rkey, "write with the rkey before access");
	expect(0, 0, 64, 'S', "write with the rkey before access");
	printf("access: write/read/send with the new keys, the old rkey REM_ACCESS_ERR\n");

	/* translation: buffer 0 -> 1 */
	old = cur;
	rereg(IBV_REREG_MR_CHANGE_TRANSLATION, 0, 1, 0, "translation");
	traffic_ok(0, 1, "TUt", "translation");
	expect(0, 0, 4096, 'S', "old buffer after translation");
	expect(0, 4096, BUF - 4096, 'a', "old buffer after translation");
	write_refused(0, saddr[0], old.rkey, "write with the rkey before translation");
	write_refused(0, saddr[1], old.rkey, "old rkey to the new buffer");
	expect(0, 0, 64, 'S', "old buffer after the stale-key write");
	expect(1, 0, 64, 'U', "new buffer after the stale-key write");
	printf("translation: write/read/send reach the new buffer, old rkey REM_ACCESS_ERR\n");

	/* PD: pd1 -> pd2 (link 1's server QP) */
	old = cur;
	rereg(IBV_REREG_MR_CHANGE_PD, 2, 0, 0, "pd");
	traffic_ok(1, 1, "PQp", "PD (a QP of the new PD)");
	write_refused(0, saddr[1], cur.rkey, "write on a QP of the old PD");
	write_refused(1, saddr[1], old.rkey, "old rkey on a QP of the new PD");
	expect(1, 0, 64, 'Q', "buffer after the refused writes");
	printf("pd: the new PD's QP writes/reads/sends, the old PD's REM_ACCESS_ERR\n");

	/* all three: buffer 2, pd1, read-only remotely */
	old = cur;
	rereg(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
	      IBV_REREG_MR_CHANGE_ACCESS, 1, 2,
	      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, "all flags");
	read_ok(0, 2, 'x', "read after all flags");
	send_ok(0, 2, 'X', "send after all flags");
	write_refused(0, saddr[2], cur.rkey, "write after all flags (no REMOTE_WRITE)");
	write_refused(1, saddr[2], cur.rkey, "write on the old PD's QP after all flags");
	write_refused(0, saddr[1], old.rkey, "old rkey after all flags");
	expect(2, 0, 64, 'X', "buffer after the refused writes");
	expect(1, 0, 64, 'Q', "old buffer after all flags");
	rereg(IBV_REREG_MR_CHANGE_ACCESS, 0, 0, rw, "access rw again");
	write_ok(0, 2, 'Y', "write after access rw again");
	printf("all flags: read/send on the new PD's QP, writes refused until REMOTE_WRITE\n");

	/* bad flags and input: refused, the MR as it was and still in use */
	rereg_bad(0, 0, 0, 0, IBV_REREG_MR_ERR_CMD, EINVAL, "no flags");
	rereg_bad(IBV_REREG_MR_FLAGS_SUPPORTED + 1, 0, 0, 0, IBV_REREG_MR_ERR_INPUT,
		  EINVAL, "unknown flag");
	rereg_bad(IBV_REREG_MR_CHANGE_ACCESS, 0, 0, IBV_ACCESS_REMOTE_WRITE,
		  IBV_REREG_MR_ERR_CMD, EINVAL, "REMOTE_WRITE without LOCAL_WRITE");
	rereg_bad(IBV_REREG_MR_CHANGE_PD, 2, 0, rw, IBV_REREG_MR_ERR_INPUT, EINVAL,
		  "access without CHANGE_ACCESS");
	rereg_bad(IBV_REREG_MR_CHANGE_TRANSLATION, 0, NBUF, 0, IBV_REREG_MR_ERR_INPUT,
		  EINVAL, "translation to NULL");
	write_ok(0, 2, 'Z', "write after the refused calls");

	/*
	 * rdma-core's test_mr flow (tests/test_mr.py, test_mr_rereg_addr): a
	 * receive posted with the old lkey, then a translation: the SEND finds a
	 * stale lkey at the receiver (its LOC_PROT_ERR, our REM_OP_ERR, our own
	 * posted receive flushed); both QPs back through RESET, the CQs drained,
	 * then traffic with the new keys on the same QPs
	 */
	restate_flow();

	/* races: rereg while WRITEs with the old key are in flight */
	fill(3, 0, BUF, 0);
	race(1, IBV_REREG_MR_CHANGE_TRANSLATION, 3, false, 0, "race translation");
	expect(3, 0, BUF, 0, "new buffer after the translation race");
	write_ok(0, 3, 'n', "write to the new buffer after the race");
	race(3, IBV_REREG_MR_CHANGE_ACCESS, 0, false,
	     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, "race access -REMOTE_WRITE");
	write_refused(0, saddr[3], cur.rkey, "write after the access race");
	read_ok(0, 3, 'm', "read after the access race");
	/*
	 * the same addresses, new memory: fresh pages mapped over buffer 3,
	 * then a translation to that same range while WRITEs to it stream with
	 * the old key (a key kept across the rereg would let them land there)
	 */
	rereg(IBV_REREG_MR_CHANGE_ACCESS, 0, 0, rw, "access rw before the remap race");
	race(3, IBV_REREG_MR_CHANGE_TRANSLATION, 3, true, 0, "race remap (same range, new pages)");
	expect(3, 0, BUF, 0, "new pages after the remap race");
	write_ok(0, 3, 'o', "write to the new pages after the race");

	{
		struct req q = { .cmd = C_QUIT };

		oob_xfer(ctl_fd, &q, sizeof(q), true);
	}
}

int main(int argc, char **argv)
{
	struct side_args a = { .dev = "tbrdma0", .port = 18650 };
	int i;

	if (!side_args_parse(argc, argv, "rereg_peer", &a))
		goto usage;
	role = a.role;
	gid_index = a.gid_index;

	ctx = open_device(a.dev);
	pd1 = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	CHECK(pd1 && pd2 && cq, "ibv_alloc_pd/ibv_create_cq");
	CHECK(!ibv_query_gid(ctx, 1, gid_index, &gid), "ibv_query_gid %d", gid_index);
	ctl_fd = a.server ? oob_server(a.port) : oob_client(a.host, a.port);
	oob_xfer(ctl_fd, &gid, sizeof(gid), true);
	oob_xfer(ctl_fd, &peer_gid, sizeof(peer_gid), false);
	if (a.server) {
		for (i = 0; i < NBUF; i++) {
			buf[i] = mmap(NULL, BUF, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			CHECK(buf[i] != MAP_FAILED, "mmap");
			saddr[i] = (uintptr_t)buf[i];
		}
		mr = ibv_reg_mr(pd1, buf[0], BUF, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_READ);
		CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
		oob_xfer(ctl_fd, saddr, sizeof(saddr), true);
		serve();
		CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr");
	} else {
		oob_xfer(ctl_fd, saddr, sizeof(saddr), false);
		client();
		CHECK(!ibv_dereg_mr(src_mr), "ibv_dereg_mr");
	}
	for (i = 0; i < 2; i++)
		CHECK(!qp[i] || !ibv_destroy_qp(qp[i]), "ibv_destroy_qp");
	CHECK(!ibv_destroy_cq(cq) && !ibv_dealloc_pd(pd1) && !ibv_dealloc_pd(pd2),
	      "destroy cq/pd");
	printf("rereg_peer %s: ok\n", role);
	return 0;
usage:
	fprintf(stderr, "usage: rereg_peer [-d DEV] [-g GID_INDEX] [-p PORT] server|client SERVER_IPV4\n");
	return 2;
}
