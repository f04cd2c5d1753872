// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * integrity: RC data integrity between two processes, libibverbs only.
 *
 *   integrity [options] server            (listens on TCP --port)
 *   integrity [options] client HOST       (connects to HOST:--port)
 *
 * The two sides exchange QP numbers, GIDs and MR keys over TCP, and keep the
 * TCP connection as a lockstep control channel. The client plans every round
 * from a seeded PRNG (--seed: the run is reproducible) and sends the plan;
 * each round moves one seeded pattern and the other side verifies it byte for
 * byte, together with guard bytes around (and between) the buffers, so
 * overruns and misplaced scatter/gather pieces are caught:
 *
 *   WRITE      client RDMA WRITEs (1..4 WRs, 1..max_sge local pieces each,
 *              sometimes inline) into the server MR; a SEND notifies; the
 *              server verifies
 *   WRITE_IMM  the same, the last WR is WRITE_WITH_IMM (immediate, opcode and
 *              byte_len checked on the receive completion)
 *   READ       server writes a pattern; client RDMA READs it (1..4 WRs,
 *              scattered into 1..max_sge pieces) and verifies
 *   SEND       multi-SGE or inline SEND into a scattered receive WQE
 *   SEND_IMM   the same with SEND_WITH_IMM
 *   ATOMIC     FETCH_ADD and CMP_SWAP (hit and miss) on a server word, when
 *              the device reports atomic_cap != NONE (or --atomics)
 *
 * First every op at the edge sizes (0, 1, the payload per frame on 4096-byte
 * frames 4048 and on 4144-byte ones 4096, each +-1, 65536 and --max-size),
 * then random sizes (log-uniform, 1 B .. --max-size) until --mib MiB of
 * random rounds have moved. WRITE, WRITE_IMM and READ also run once with
 * 64 KiB and a quarter of their random rounds with page-aligned buffers at
 * both ends in one WR of one SGE (what TX zero-copy takes), the others with
 * scattered ones. Any error completion, unexpected
 * completion field or mismatch fails the run (exit 1, "FAIL: ..." on both
 * sides). At the end each side prints the bytes verified per op.
 *
 * --until-signal (client): random rounds go on, whatever --mib says, until
 * the client gets SIGUSR1; it then finishes the round in flight and ends the
 * run as usual (tests/hw/run: traffic that spans a cable unplug whose time a
 * person chooses).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define GUARD		64		/* guard bytes before/after/between */
#define MAX_WR		4		/* data WRs per round */
#define CQ_TIMEOUT_MS	30000

enum op { OP_WRITE, OP_WRITE_IMM, OP_READ, OP_SEND, OP_SEND_IMM, OP_ATOMIC,
	  OP_NUM, OP_END = 100 };
static const char *const op_name[OP_NUM] = {
	"WRITE", "WRITE_IMM", "READ", "SEND", "SEND_IMM", "ATOMIC",
};

/* ---- failure ------------------------------------------------------------ */

static const char *role = "?";
static int server_side;
static int ctl_fd = -1;

struct msg {
	uint32_t type;		/* enum op, or OP_END */
	uint32_t round;
	uint64_t size;
	uint64_t roff;		/* offset in the server buffer */
	uint64_t seed;
	uint32_t nwr, lsge, rsge, flags;
	uint32_t imm;
	int32_t status;		/* result: 0 ok */
	char why[200];
};

#define F_INLINE	1
#define F_ALIGN		2	/* WRITE/READ: one WR, one SGE, both ends page aligned */

/* ---- patterns ----------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* byte j of the pattern of @seed: random access, so any piece can be made */
static uint8_t pat_byte(uint64_t hs, uint64_t j)
{
	return (uint8_t)(mix64(hs + (j >> 3)) >> ((j & 7) * 8));
}

static void pat_fill(uint8_t *dst, uint64_t seed, uint64_t j, size_t len)
{
	uint64_t hs = mix64(seed);
	size_t i = 0;

	for (; i < len && ((j + i) & 7); i++)
		dst[i] = pat_byte(hs, j + i);
	for (; i + 8 <= len; i += 8) {
		uint64_t v = htole64(mix64(hs + ((j + i) >> 3)));

		memcpy(dst + i, &v, 8);
	}
	for (; i < len; i++)
		dst[i] = pat_byte(hs, j + i);
}

/* first mismatching index, or -1 */
static long long pat_check(const uint8_t *src, uint64_t seed, uint64_t j, size_t len)
{
	uint64_t hs = mix64(seed);
	size_t i = 0;

	for (; i < len && ((j + i) & 7); i++)
		if (src[i] != pat_byte(hs, j + i))
			return i;
	for (; i + 8 <= len; i += 8) {
		uint64_t v = htole64(mix64(hs + ((j + i) >> 3)));

		if (memcmp(src + i, &v, 8))
			break;
	}
	for (; i < len; i++)
		if (src[i] != pat_byte(hs, j + i))
			return i;
	return -1;
}

static void guard_fill(uint8_t *p, uint64_t seed, size_t len)
{
	pat_fill(p, seed ^ 0x6a09e667f3bcc908ULL, (uintptr_t)p, len);
}

static long long guard_check(const uint8_t *p, uint64_t seed, size_t len)
{
	return pat_check(p, seed ^ 0x6a09e667f3bcc908ULL, (uintptr_t)p, len);
}

/* plan PRNG (client) */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state += 0x9e3779b97f4a7c15ULL;
	return mix64(rng_state);
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- control channel ---------------------------------------------------- */

static void msg_send(struct msg *m) { oob_xfer(ctl_fd, m, sizeof(*m), 1); }
static void msg_recv(struct msg *m) { oob_xfer(ctl_fd, m, sizeof(*m), 0); }

/* exchange results: both sides send theirs, then read the peer's */
static void result_exchange(uint32_t round, const char *why)
{
	struct msg m = { .type = OP_END, .round = round, .status = why != NULL };

	if (why)
		snprintf(m.why, sizeof(m.why), "%s", why);
	msg_send(&m);
	msg_recv(&m);
	if (why)
		die("%s", why);
	CHECK(m.round == round, "control channel out of step (%u vs %u)", m.round, round);
	if (m.status)
		die("peer reports: %s", m.why);
}

/* ---- verbs -------------------------------------------------------------- */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;		/* data area, then a small control area */
static size_t buf_len, data_len;
static uint32_t max_sge, max_inline;
static int gid_index;
static uint64_t max_size = 16 << 20;

struct peer {
	uint32_t qpn, psn;
	union ibv_gid gid;
	uint64_t addr, len;
	uint32_t rkey, atomics;
	uint64_t seed;
};

static void setup(int force_atomics, int *atomics)
{
	struct ibv_device_attr da;
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr qa = { 0 };

	CHECK(!ibv_query_device(ctx, &da), "ibv_query_device");
	*atomics = da.atomic_cap != IBV_ATOMIC_NONE || force_atomics;
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "ibv_alloc_pd");
	data_len = max_size + 8192 + (size_t)(da.max_sge + 2) * GUARD * 2;
	buf_len = data_len + 4096;
	CHECK(!posix_memalign((void **)&buf, 4096, buf_len), "no memory");
	memset(buf, 0, buf_len);
	mr = ibv_reg_mr(pd, buf, buf_len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			(*atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0));
	CHECK(mr, "ibv_reg_mr %zu bytes: %s", buf_len, strerror(errno));
	scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	CHECK(scq && rcq, "ibv_create_cq");
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = da.max_sge;
	ia.cap.max_recv_sge = da.max_sge;
	ia.cap.max_inline_data = 128;
	qp = ibv_create_qp(pd, &ia);
	if (!qp) {	/* a device without 128 B of inline data */
		ia.cap.max_inline_data = 0;
		qp = ibv_create_qp(pd, &ia);
	}
	CHECK(qp, "ibv_create_qp: %s", strerror(errno));
	max_sge = ia.cap.max_send_sge < ia.cap.max_recv_sge ?
		  ia.cap.max_send_sge : ia.cap.max_recv_sge;
	if ((int)max_sge > da.max_sge_rd)
		max_sge = da.max_sge_rd;
	if (max_sge < 1)
		max_sge = 1;
	max_inline = ia.cap.max_inline_data;
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     (*atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0);
	CHECK(!ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS), "modify_qp -> INIT");
}

/*
 * A completion that never comes: what the driver says of our QP while it
 * still exists (tbrdma's `rdma -dd` attributes: sq_queued, inflight,
 * timer_in_ns, tx_stalled, docs/json.md), on stderr before the failure.
 */
static void qp_state_show(void)
{
	char cmd[96];

	fflush(stdout);
	snprintf(cmd, sizeof(cmd), "rdma -dd res show qp lqpn %u 1>&2", qp->qp_num);
	if (system(cmd))
		fprintf(stderr, "(%s failed)\n", cmd);
}

/* one completion from @cq within CQ_TIMEOUT_MS; any error status fails */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	double end = now_s() + CQ_TIMEOUT_MS / 1000.0;
	unsigned int idle = 0;
	int r;

	for (;;) {
		r = ibv_poll_cq(cq, 1, wc);
		CHECK(r >= 0, "ibv_poll_cq: %d", r);
		if (r)
			break;
		if (++idle > 64) {
			if (now_s() >= end)
				qp_state_show();
			CHECK(now_s() < end, "%s: no completion within %d ms", what,
			      CQ_TIMEOUT_MS);
			usleep(50);
		}
	}
	CHECK(wc->status == IBV_WC_SUCCESS, "%s: error completion: %s", what, wc_str(wc));
}

static void expect_send_wc(uint64_t wr_id, enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc;

	poll_one(scq, &wc, what);
	CHECK(wc.wr_id == wr_id && wc.opcode == op,
	      "%s: unexpected send completion: %s (want wr_id %#llx opcode %d)",
	      what, wc_str(&wc), (unsigned long long)wr_id, op);
}

static void post_send1(struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int r = ibv_post_send(qp, wr, &bad);

	CHECK(!r, "%s: ibv_post_send: %s", what, strerror(r));
}

static void post_recv1(struct ibv_sge *sge, int n, uint64_t wr_id)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = n }, *bad;
	int r = ibv_post_recv(qp, &wr, &bad);

	CHECK(!r, "ibv_post_recv: %s", strerror(r));
}

/*
 * Scatter layout: @len bytes in @n pieces (no empty piece) placed from @base
 * with a random gap (1..GUARD) between pieces; GUARD bytes before the first
 * and after the last are guards too. Returns the number of pieces.
 */
struct layout {
	int n;
	size_t off[16], len[16];
};

static int split(struct layout *l, size_t base, size_t len, int n, uint64_t seed)
{
	uint64_t s = mix64(seed ^ 0x3c6ef372fe94f82bULL);
	size_t cut[16], at = base;
	int i, j;

	if (!len) {
		l->n = 0;
		return 0;
	}
	if ((size_t)n > len)
		n = len;
	/* n - 1 distinct cut points in (0, len), sorted */
	cut[0] = 0;
	for (i = 1; i < n; i++) {
		size_t c;
		int dup;

		do {
			s = mix64(s);
			c = 1 + s % (len - 1);
			dup = 0;
			for (j = 1; j < i; j++)
				dup |= cut[j] == c;
		} while (dup);
		for (j = i; j > 1 && cut[j - 1] > c; j--)
			cut[j] = cut[j - 1];
		cut[j] = c;
	}
	cut[n] = len;
	for (i = 0; i < n; i++) {
		l->off[i] = at;
		l->len[i] = cut[i + 1] - cut[i];
		s = mix64(s);
		at += l->len[i] + 1 + s % GUARD;
	}
	l->n = n;
	return n;
}

static void layout_guards(const struct layout *l, uint64_t seed, int check, const char *what)
{
	int i;

	for (i = 0; i <= l->n && l->n; i++) {
		size_t from = i ? l->off[i - 1] + l->len[i - 1] : l->off[0] - GUARD;
		size_t to = i < l->n ? l->off[i] : from + GUARD;
		long long bad;

		if (!check) {
			guard_fill(buf + from, seed, to - from);
			continue;
		}
		bad = guard_check(buf + from, seed, to - from);
		CHECK(bad < 0, "%s: guard byte at buffer offset %llu overwritten (%s piece %d)",
		      what, (unsigned long long)(from + bad), i < l->n ? "before" : "after",
		      i < l->n ? i : i - 1);
	}
}

static void layout_pattern(const struct layout *l, uint64_t seed, uint64_t j0, int check,
			   const char *what)
{
	uint64_t j = j0;
	int i;

	for (i = 0; i < l->n; i++) {
		if (!check) {
			pat_fill(buf + l->off[i], seed, j, l->len[i]);
		} else {
			long long bad = pat_check(buf + l->off[i], seed, j, l->len[i]);

			CHECK(bad < 0, "%s: data mismatch at message byte %llu (piece %d of %d, "
			      "got %#x want %#x)", what, (unsigned long long)(j + bad), i,
			      l->n, buf[l->off[i] + bad], pat_byte(mix64(seed), j + bad));
		}
		j += l->len[i];
	}
}

static void layout_sges(const struct layout *l, struct ibv_sge *sge)
{
	int i;

	for (i = 0; i < l->n; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + l->off[i], l->len[i], mr->lkey };
}

/* ---- rounds ------------------------------------------------------------- */

static uint64_t verified[OP_NUM], count[OP_NUM], n_inline;
static struct peer me, peer;
#define CTRL_OFF	data_len	/* 4 KiB control area after the data */

static uint32_t imm_of(const struct msg *m) { return (uint32_t)mix64(m->seed ^ 0x1111); }

/* WR chunks of a WRITE/READ: nwr contiguous pieces of the message */
static void chunks(const struct msg *m, size_t *cs, size_t *cl, uint32_t *nwr)
{
	struct layout l;
	uint32_t i;

	if (!m->size) {		/* one zero-length WR */
		*nwr = 1;
		cs[0] = cl[0] = 0;
		return;
	}
	*nwr = split(&l, 0, m->size, m->nwr, m->seed ^ 0x77);
	for (i = 0; i < *nwr; i++) {
		cl[i] = l.len[i];
		cs[i] = i ? cs[i - 1] + cl[i - 1] : 0;
	}
}

/* client: WRITE / WRITE_IMM / READ */
static void client_rdma(const struct msg *m)
{
	size_t cs[MAX_WR], cl[MAX_WR], base = m->flags & F_ALIGN ? 4096 : GUARD + m->seed % GUARD;
	struct layout l[MAX_WR];
	struct ibv_sge sge[MAX_WR][16];
	struct ibv_send_wr wr[MAX_WR + 1];
	uint32_t nwr, i;
	int is_read = m->type == OP_READ;
	const char *what = op_name[m->type];
	uint64_t note = m->round;

	chunks(m, cs, cl, &nwr);
	for (i = 0; i < nwr; i++) {
		split(&l[i], base, cl[i], 1 + rnd_below(m->lsge), m->seed + i);
		if (l[i].n)
			base = l[i].off[l[i].n - 1] + l[i].len[l[i].n - 1] + GUARD + 1;
		layout_guards(&l[i], m->seed, 0, what);
		if (!is_read)
			layout_pattern(&l[i], m->seed, cs[i], 0, what);
		layout_sges(&l[i], sge[i]);
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = (uint64_t)m->round << 8 | i;
		wr[i].sg_list = sge[i];
		wr[i].num_sge = l[i].n;
		wr[i].opcode = is_read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		if ((m->flags & F_INLINE) && !is_read && cl[i] <= max_inline)
			wr[i].send_flags |= IBV_SEND_INLINE;
		wr[i].wr.rdma.remote_addr = peer.addr + m->roff + cs[i];
		wr[i].wr.rdma.rkey = peer.rkey;
		wr[i].next = i + 1 < nwr ? &wr[i + 1] : NULL;
	}
	if (m->type == OP_WRITE_IMM) {
		wr[nwr - 1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr[nwr - 1].imm_data = htonl(imm_of(m));
	} else if (m->type == OP_WRITE) {
		static struct ibv_sge nsge;

		memcpy(buf + CTRL_OFF, &note, sizeof(note));
		nsge = (struct ibv_sge){ (uintptr_t)buf + CTRL_OFF, sizeof(note), mr->lkey };
		memset(&wr[nwr], 0, sizeof(wr[nwr]));
		wr[nwr].wr_id = (uint64_t)m->round << 8 | 0xff;
		wr[nwr].sg_list = &nsge;
		wr[nwr].num_sge = 1;
		wr[nwr].opcode = IBV_WR_SEND;
		wr[nwr].send_flags = IBV_SEND_SIGNALED;
		wr[nwr - 1].next = &wr[nwr];
	}
	post_send1(wr, what);
	for (i = 0; i < nwr; i++) {
		expect_send_wc(wr[i].wr_id, is_read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE, what);
		if (wr[i].send_flags & IBV_SEND_INLINE)
			n_inline++;
	}
	if (m->type == OP_WRITE)
		expect_send_wc(wr[nwr].wr_id, IBV_WC_SEND, what);
	if (is_read) {
		for (i = 0; i < nwr; i++) {
			layout_pattern(&l[i], m->seed, cs[i], 1, what);
			layout_guards(&l[i], m->seed, 1, what);
		}
		verified[m->type] += m->size;
	}
}

/* server: prepare for WRITE / WRITE_IMM / READ; then wait and verify */
static void server_rdma_prepare(const struct msg *m)
{
	struct ibv_sge sge = { (uintptr_t)buf + CTRL_OFF, 64, mr->lkey };

	guard_fill(buf + m->roff - GUARD, m->seed, GUARD);
	guard_fill(buf + m->roff + m->size, m->seed, GUARD);
	if (m->type == OP_READ)
		pat_fill(buf + m->roff, m->seed, 0, m->size);
	else
		post_recv1(&sge, 1, (uint64_t)m->round << 8 | 0xfe);
}

static void server_rdma_finish(const struct msg *m)
{
	const char *what = op_name[m->type];
	struct ibv_wc wc;
	long long bad;

	if (m->type == OP_READ)
		goto guards;
	poll_one(rcq, &wc, what);
	CHECK(wc.wr_id == ((uint64_t)m->round << 8 | 0xfe), "%s: recv wr_id %#llx", what,
	      (unsigned long long)wc.wr_id);
	if (m->type == OP_WRITE) {
		uint64_t note;

		memcpy(&note, buf + CTRL_OFF, sizeof(note));
		CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == sizeof(note) &&
		      !(wc.wc_flags & IBV_WC_WITH_IMM) && note == m->round,
		      "WRITE notification: %s flags %#x note %llu", wc_str(&wc), wc.wc_flags,
		      (unsigned long long)note);
	} else {
		size_t cs[MAX_WR], cl[MAX_WR];
		uint32_t nwr;

		chunks(m, cs, cl, &nwr);
		CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == imm_of(m),
		      "WRITE_IMM: %s flags %#x imm %#x (want opcode %d imm %#x)", wc_str(&wc),
		      wc.wc_flags, ntohl(wc.imm_data), IBV_WC_RECV_RDMA_WITH_IMM, imm_of(m));
		CHECK(wc.byte_len == cl[nwr - 1],
		      "WRITE_IMM: byte_len %u, the WRITE_WITH_IMM WR wrote %zu", wc.byte_len,
		      cl[nwr - 1]);
	}
	bad = pat_check(buf + m->roff, m->seed, 0, m->size);
	CHECK(bad < 0, "%s: data mismatch at byte %lld of %llu (got %#x want %#x)", what, bad,
	      (unsigned long long)m->size, buf[m->roff + bad],
	      pat_byte(mix64(m->seed), bad));
	verified[m->type] += m->size;
guards:
	bad = guard_check(buf + m->roff - GUARD, m->seed, GUARD);
	CHECK(bad < 0, "%s: guard byte %lld before the target overwritten", what, GUARD - bad);
	bad = guard_check(buf + m->roff + m->size, m->seed, GUARD);
	CHECK(bad < 0, "%s: guard byte %lld after the target overwritten", what, bad);
}

/* receive side of a SEND: capacity = size + (seed % 64), rsge pieces */
static void send_recv_layout(const struct msg *m, struct layout *l)
{
	split(l, GUARD + m->seed % 61, m->size + (m->seed >> 8) % 64, m->rsge, m->seed ^ 0x5e);
}

static void server_send_prepare(const struct msg *m)
{
	struct layout l;
	struct ibv_sge sge[16];

	send_recv_layout(m, &l);
	layout_guards(&l, m->seed, 0, "SEND");
	layout_sges(&l, sge);
	post_recv1(sge, l.n, (uint64_t)m->round << 8 | 0xfd);
}

static void server_send_finish(const struct msg *m)
{
	const char *what = op_name[m->type];
	int imm = m->type == OP_SEND_IMM;
	struct layout l;
	struct ibv_wc wc;
	uint64_t left = m->size;
	int i;

	poll_one(rcq, &wc, what);
	CHECK(wc.wr_id == ((uint64_t)m->round << 8 | 0xfd) && wc.opcode == IBV_WC_RECV &&
	      wc.byte_len == m->size && !!(wc.wc_flags & IBV_WC_WITH_IMM) == imm &&
	      (!imm || ntohl(wc.imm_data) == imm_of(m)),
	      "%s: receive completion %s flags %#x imm %#x (want byte_len %llu imm %#x)",
	      what, wc_str(&wc), wc.wc_flags, ntohl(wc.imm_data),
	      (unsigned long long)m->size, imm ? imm_of(m) : 0);
	send_recv_layout(m, &l);
	/* only the first size bytes hold the message */
	for (i = 0; i < l.n; i++) {
		if (l.len[i] > left)
			l.len[i] = left;
		left -= l.len[i];
	}
	layout_pattern(&l, m->seed, 0, 1, what);
	send_recv_layout(m, &l);
	layout_guards(&l, m->seed, 1, what);
	verified[m->type] += m->size;
}

static void client_send(const struct msg *m)
{
	struct layout l;
	struct ibv_sge sge[16];
	struct ibv_send_wr wr = { 0 };
	const char *what = op_name[m->type];

	split(&l, GUARD + m->seed % 59, m->size, m->lsge, m->seed ^ 0xc1);
	layout_pattern(&l, m->seed, 0, 0, what);
	layout_sges(&l, sge);
	wr.wr_id = (uint64_t)m->round << 8 | 0xfc;
	wr.sg_list = sge;
	wr.num_sge = l.n;
	wr.opcode = m->type == OP_SEND_IMM ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.imm_data = htonl(imm_of(m));
	wr.send_flags = IBV_SEND_SIGNALED;
	if ((m->flags & F_INLINE) && m->size <= max_inline) {
		wr.send_flags |= IBV_SEND_INLINE;
		n_inline++;
	}
	post_send1(&wr, what);
	expect_send_wc(wr.wr_id, IBV_WC_SEND, what);
}

/* ATOMIC: a word at roff (8-aligned) starts at m->seed on the server */
#define N_ATOMIC	64

static void client_atomic(const struct msg *m)
{
	uint64_t *res = (uint64_t *)(buf + 4096), val = m->seed, add;
	struct ibv_sge sge = { (uintptr_t)res, 8, mr->lkey };
	struct ibv_send_wr wr = { 0 };
	int i;

	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = peer.addr + m->roff;
	wr.wr.atomic.rkey = peer.rkey;
	for (i = 0; i < N_ATOMIC; i++) {
		wr.wr_id = (uint64_t)m->round << 8 | i;
		*res = ~val;
		if (i % 4 == 3) {	/* compare-and-swap: a miss, then a hit */
			wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			wr.wr.atomic.compare_add = i % 8 == 3 ? val ^ 1 : val;
			wr.wr.atomic.swap = rnd();
			post_send1(&wr, "CMP_SWAP");
			expect_send_wc(wr.wr_id, IBV_WC_COMP_SWAP, "CMP_SWAP");
			CHECK(*res == val, "CMP_SWAP %d returned %#llx, want %#llx", i,
			      (unsigned long long)*res, (unsigned long long)val);
			if (i % 8 != 3)
				val = wr.wr.atomic.swap;
		} else {
			add = rnd();
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.compare_add = add;
			post_send1(&wr, "FETCH_ADD");
			expect_send_wc(wr.wr_id, IBV_WC_FETCH_ADD, "FETCH_ADD");
			CHECK(*res == val, "FETCH_ADD %d returned %#llx, want %#llx", i,
			      (unsigned long long)*res, (unsigned long long)val);
			val += add;
		}
	}
	/* the final value goes to the server for it to compare */
	memcpy(buf + CTRL_OFF + 64, &val, 8);
	verified[OP_ATOMIC] += N_ATOMIC * 8;
}

/* ---- main loops --------------------------------------------------------- */

static void report(double t0)
{
	double dt = now_s() - t0;
	uint64_t total = 0;
	int i;

	for (i = 0; i < OP_NUM; i++) {
		if (!count[i])
			continue;
		printf("integrity %s: %-9s %6llu rounds %12llu bytes verified here%s\n", role,
		       op_name[i], (unsigned long long)count[i],
		       (unsigned long long)verified[i],
		       i == OP_ATOMIC && !server_side ? " (64 FETCH_ADD/CMP_SWAP each)" : "");
		total += verified[i];
	}
	printf("integrity %s: total %llu bytes verified here, %llu inline WRs, %.1f s\n",
	       role, (unsigned long long)total, (unsigned long long)n_inline, dt);
}

static void server_loop(void)
{
	struct msg m;
	double t0 = now_s();

	for (;;) {
		msg_recv(&m);
		if (m.type == OP_END)
			break;
		CHECK(m.type < OP_NUM && m.size <= max_size &&
		      m.roff >= GUARD && m.roff + m.size + GUARD <= data_len,
		      "bad round descriptor (op %u size %llu)", m.type,
		      (unsigned long long)m.size);
		count[m.type]++;
		switch (m.type) {
		case OP_SEND:
		case OP_SEND_IMM:
			server_send_prepare(&m);
			break;
		case OP_ATOMIC:
			memcpy(buf + m.roff, &m.seed, 8);
			break;
		default:
			server_rdma_prepare(&m);
		}
		msg_send(&m);	/* ready */
		switch (m.type) {
		case OP_SEND:
		case OP_SEND_IMM:
			server_send_finish(&m);
			break;
		case OP_ATOMIC: {
			struct msg f;
			uint64_t have;

			msg_recv(&f);	/* the client's expected final value */
			memcpy(&have, buf + m.roff, 8);
			CHECK(have == f.seed, "ATOMIC: final word %#llx, the client expects %#llx",
			      (unsigned long long)have, (unsigned long long)f.seed);
			verified[OP_ATOMIC] += 8;
			break;
		}
		case OP_READ:
			break;	/* the client verifies */
		default:
			server_rdma_finish(&m);
		}
		result_exchange(m.round, NULL);
		if (m.type == OP_READ) {
			long long bad = pat_check(buf + m.roff, m.seed, 0, m.size);

			/* a READ must leave the source and its guards alone */
			CHECK(bad < 0, "READ: source changed at byte %lld", bad);
			server_rdma_finish(&m);
		}
	}
	msg_send(&m);
	report(t0);
}

static size_t pick_size(void)
{
	unsigned int bits = 0;
	uint64_t lo;

	while ((1ULL << (bits + 1)) <= max_size)
		bits++;
	lo = 1ULL << rnd_below(bits + 1);
	return lo + rnd_below(lo < max_size ? (lo * 2 > max_size ? max_size - lo : lo) : 1);
}

static void client_round(struct msg *m)
{
	struct msg r;

	count[m->type]++;
	msg_send(m);
	msg_recv(&r);	/* ready */
	CHECK(r.round == m->round, "control channel out of step");
	switch (m->type) {
	case OP_SEND:
	case OP_SEND_IMM:
		client_send(m);
		break;
	case OP_ATOMIC:
		client_atomic(m);
		r = *m;
		memcpy(&r.seed, buf + CTRL_OFF + 64, 8);
		msg_send(&r);
		break;
	default:
		client_rdma(m);
	}
	result_exchange(m->round, NULL);
}

static volatile sig_atomic_t stop_requested;

static void on_usr1(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void client_loop(uint64_t seed, uint64_t mib, int atomics, int until_signal)
{
	static const uint64_t edges[] = { 0, 1, 4047, 4048, 4049, 4095, 4096, 4097, 65536 };
	uint64_t moved = 0, budget = mib << 20;
	uint32_t round = 0;
	double t0 = now_s();
	struct msg m;
	int op, e, ne = sizeof(edges) / sizeof(edges[0]);

	rng_state = seed;
	for (e = 0; e <= ne; e++) {
		for (op = 0; op < OP_ATOMIC; op++) {
			memset(&m, 0, sizeof(m));
			m.type = op;
			m.round = round++;
			m.size = e < ne ? edges[e] : max_size;
			if (m.size > max_size)
				continue;
			m.seed = rnd();
			m.roff = GUARD + rnd_below(4096);
			m.nwr = 1 + (e % MAX_WR);
			m.lsge = 1 + (e + op) % max_sge;
			m.rsge = 1 + (e * 3 + op) % max_sge;
			m.flags = e & 1 ? F_INLINE : 0;
			client_round(&m);
		}
	}
	/* 64 KiB of whole pages at both ends: 16 frames each that TX zero-copy takes */
	for (op = 0; op <= OP_READ && max_size >= 65536; op++) {
		memset(&m, 0, sizeof(m));
		m.type = op;
		m.round = round++;
		m.size = 65536;
		m.seed = rnd();
		m.roff = 4096;
		m.nwr = m.lsge = m.rsge = 1;
		m.flags = F_ALIGN;
		client_round(&m);
	}
	if (atomics) {
		memset(&m, 0, sizeof(m));
		m.type = OP_ATOMIC;
		m.round = round++;
		m.seed = rnd();
		m.roff = GUARD + 8 * rnd_below(512);
		client_round(&m);
	}
	while (until_signal ? !stop_requested : moved < budget) {
		memset(&m, 0, sizeof(m));
		m.type = rnd_below(OP_ATOMIC);
		m.round = round++;
		m.size = pick_size();
		m.seed = rnd();
		m.roff = GUARD + rnd_below(4096);
		m.nwr = 1 + rnd_below(MAX_WR);
		m.lsge = 1 + rnd_below(max_sge);
		m.rsge = 1 + rnd_below(max_sge);
		m.flags = rnd_below(2) ? F_INLINE : 0;
		if (m.type <= OP_READ && !rnd_below(4)) {
			/* whole pages at both ends: what TX zero-copy takes */
			m.roff = 4096;
			m.nwr = m.lsge = 1;
			m.flags = F_ALIGN;
		}
		client_round(&m);
		moved += m.size;
	}
	memset(&m, 0, sizeof(m));
	m.type = OP_END;
	msg_send(&m);
	msg_recv(&m);
	report(t0);
}

static void usage(void)
{
	printf("usage: integrity [-d DEV] [-g GID_INDEX] [-p PORT] [--seed N] [--mib N]\n"
	       "                 [--max-size BYTES] [--atomics] [--timeout T] [--until-signal]\n"
	       "                 server | client HOST\n"
	       "  --timeout T: the QP's IBTA local ACK timeout, 4.096 us * 2^T (default 14)\n"
	       "  --until-signal: (client) random rounds until SIGUSR1, not --mib\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, 0, 'd' }, { "gid", 1, 0, 'g' }, { "port", 1, 0, 'p' },
		{ "seed", 1, 0, 's' }, { "mib", 1, 0, 'm' }, { "max-size", 1, 0, 'M' },
		{ "atomics", 0, 0, 'a' }, { "timeout", 1, 0, 't' },
		{ "until-signal", 0, 0, 'u' }, { 0 },
	};
	const char *dev = "tbrdma0";
	uint64_t seed = 1, mib = 64;
	int port = 18600, force_atomics = 0, until_signal = 0, atomics, server, c;
	struct sigaction sa;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "d:g:p:s:m:M:at:", lo, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'm': mib = strtoull(optarg, NULL, 0); break;
		case 'M': max_size = strtoull(optarg, NULL, 0); break;
		case 'a': force_atomics = 1; break;
		case 't': rc_timeout = atoi(optarg); break;
		case 'u': until_signal = 1; break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	server = !strcmp(argv[optind], "server");
	if (!server && (strcmp(argv[optind], "client") || optind + 1 >= argc))
		usage();
	role = server ? "server" : "client";
	/* SA_RESTART: the flag is read between rounds, no verb or read sees EINTR */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	snprintf(die_ctx, sizeof(die_ctx), "integrity %s", role);
	server_side = server;
	CHECK(max_size >= 1 && max_size <= (1ULL << 30), "--max-size out of range");
	CHECK(rc_timeout >= 1 && rc_timeout <= 31, "--timeout out of range (1..31)");

	ctx = open_device(dev);
	setup(force_atomics, &atomics);
	ctl_fd = server ? oob_server(port) : oob_client(argv[optind + 1], port);
	c = 1;
	setsockopt(ctl_fd, IPPROTO_TCP, TCP_NODELAY, &c, sizeof(c));

	srand48(getpid() ^ time(NULL));
	me.qpn = qp->qp_num;
	me.psn = lrand48() & 0xffffff;
	CHECK(!ibv_query_gid(ctx, 1, gid_index, &me.gid), "ibv_query_gid %d", gid_index);
	me.addr = (uintptr_t)buf;
	me.len = data_len;
	me.rkey = mr->rkey;
	me.atomics = atomics;
	me.seed = seed;
	oob_xfer(ctl_fd, &me, sizeof(me), 1);
	oob_xfer(ctl_fd, &peer, sizeof(peer), 0);
	if (server)
		seed = peer.seed;
	rc_connect(qp, gid_index, peer.qpn, peer.psn, &peer.gid, me.psn);
	/* both RTS before any request */
	result_exchange(0xffffffff, NULL);
	atomics = me.atomics && peer.atomics;
	printf("integrity %s: %s qpn %#x <-> %#x, seed %llu, max size %llu, max_sge %u, "
	       "max_inline %u\n", role, dev, me.qpn, peer.qpn, (unsigned long long)seed,
	       (unsigned long long)max_size, max_sge, max_inline);
	if (!atomics)
		printf("integrity %s: note: atomic_cap is IBV_ATOMIC_NONE: ATOMIC skipped "
		       "(--atomics on both sides forces it)\n", role);
	if (server)
		server_loop();
	else
		client_loop(seed, mib, atomics, until_signal);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("integrity %s: ok\n", role);
	return 0;
}
