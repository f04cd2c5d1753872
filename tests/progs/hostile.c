// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hostile: what an unprivileged local user can do to tbrdma.ko through its
 * own verbs objects, one VM, no rail (tbr0 up with an IPv4 address).
 *
 *   hostile race SECONDS
 *	The mmap'd rings are the user's: a thread keeps the producer index
 *	of a ring one ring ahead of the kernel's consumer index, so the
 *	kernel finds a full ring again after every WQE it takes.
 *	1. RC QP, its RQ raced: modify_qp(ERR) (flushes the RQ), then
 *	   zero-WR post_recv and post_send doorbells in ERR for SECONDS.
 *	2. UD QP in RTS whose SQ holds sends to our own address (no route:
 *	   every datagram completes at once), its SQ raced: zero-WR
 *	   post_send doorbells for SECONDS, then modify_qp(ERR), doorbells.
 *	Every call must return within 1 s, and the kernel must have taken
 *	WQEs from the raced ring all along (else nothing was tested).
 *	The racer gives up after SECONDS + 30 s, so a kernel that never
 *	returns (before the fix: soft lockup, RCU stall) still ends the run.
 *
 *   hostile hog LIMIT_MB
 *	Create CQs, RC QPs and SRQs of the device's largest sizes until a
 *	create call fails. It must fail with ENOMEM before the queue memory
 *	asked for (a lower bound of what the kernel allocates) reaches
 *	2 x LIMIT_MB: the limit of the caller's memory cgroup or of its
 *	context (module parameter uctx_queue_mb). Without either limit the
 *	device limits allow tens of GiB.
 *
 * Prints "ok ..." lines; "FAIL: ..." and exit 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <rdma/ib_user_verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tbrdma-abi.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

/* ---- rings: found as the largest uverbs mapping a create call added ---- */

#define MAX_MAPS 256
struct maps {
	unsigned long start[MAX_MAPS], end[MAX_MAPS];
	int n;
};

static void maps_read(struct maps *m)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	CHECK(f, "open /proc/self/maps");
	m->n = 0;
	while (fgets(line, sizeof(line), f) && m->n < MAX_MAPS) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		CHECK(sscanf(line, "%lx-%lx", &m->start[m->n], &m->end[m->n]) == 2,
		      "maps line %s", line);
		m->n++;
	}
	fclose(f);
}

/* the largest mapping in @after that is not in @before */
static struct tbrdma_ring *maps_new_ring(const struct maps *before,
					 const struct maps *after)
{
	unsigned long best = 0, size = 0;
	int i, j;

	for (i = 0; i < after->n; i++) {
		for (j = 0; j < before->n; j++)
			if (before->start[j] == after->start[i])
				break;
		if (j < before->n)
			continue;
		if (after->end[i] - after->start[i] > size) {
			size = after->end[i] - after->start[i];
			best = after->start[i];
		}
	}
	CHECK(best, "no new ring mapping found");
	return (struct tbrdma_ring *)best;
}

/* ---- the racer ------------------------------------------------------------ */

struct racer {
	struct tbrdma_ring *ring;
	uint32_t entries;
	double give_up;		/* now_s() at which to stop anyway */
	volatile int stop;
	uint32_t first_cons;
	pthread_t thread;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	unsigned long n = 0;
	uint32_t c;

	while (!r->stop) {
		c = __atomic_load_n(&r->ring->cons, __ATOMIC_ACQUIRE);
		__atomic_store_n(&r->ring->prod, c + r->entries, __ATOMIC_RELEASE);
		if (!(++n & 0xffff) && now_s() > r->give_up)
			break;
	}
	return NULL;
}

static void racer_start(struct racer *r, struct tbrdma_ring *ring,
			uint32_t entries, double seconds)
{
	r->ring = ring;
	r->entries = entries;
	r->stop = 0;
	r->give_up = now_s() + seconds + 30;
	r->first_cons = __atomic_load_n(&ring->cons, __ATOMIC_ACQUIRE);
	CHECK(!pthread_create(&r->thread, NULL, racer_main, r), "pthread_create");
}

/* stop the racer; returns how many WQEs the kernel took meanwhile */
static uint32_t racer_stop(struct racer *r)
{
	r->stop = 1;
	pthread_join(r->thread, NULL);
	return __atomic_load_n(&r->ring->cons, __ATOMIC_ACQUIRE) - r->first_cons;
}

/* ---- timed kernel entries ------------------------------------------------- */

/*
 * A zero-WR POST_SEND/POST_RECV: the doorbell the provider rings (it rings
 * only after writing a WR; here nothing is written, the racer does it).
 */
static int doorbell(struct ibv_qp *qp, bool send)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		union {
			struct ib_uverbs_post_send s;
			struct ib_uverbs_post_recv r;
		};
	} c;
	union {
		struct ib_uverbs_post_send_resp s;
		struct ib_uverbs_post_recv_resp r;
	} resp;
	size_t len;

	memset(&c, 0, sizeof(c));
	if (send) {
		c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		c.s.response = (uintptr_t)&resp;
		c.s.qp_handle = qp->handle;
		c.s.wqe_size = sizeof(struct ib_uverbs_send_wr);
		len = sizeof(c.hdr) + sizeof(c.s);
	} else {
		c.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
		c.r.response = (uintptr_t)&resp;
		c.r.qp_handle = qp->handle;
		c.r.wqe_size = sizeof(struct ib_uverbs_recv_wr);
		len = sizeof(c.hdr) + sizeof(c.r);
	}
	c.hdr.in_words = len / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	return write(qp->context->cmd_fd, &c, len) == (ssize_t)len ? 0 : -errno;
}

static double worst;	/* the longest kernel entry so far, seconds */

static void timed(const char *what, double t0)
{
	double d = now_s() - t0;

	if (d > worst)
		worst = d;
	CHECK(d < 1.0, "%s took %.3f s with the ring raced", what, d);
}

static void to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	double t0 = now_s();

	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "modify_qp(ERR)");
	timed("modify_qp(ERR)", t0);
}

/* doorbells for @seconds; returns how many */
static unsigned long doorbells(struct ibv_qp *qp, double seconds, bool recv)
{
	double end = now_s() + seconds, t0;
	unsigned long n = 0;
	int err;

	while (now_s() < end) {
		t0 = now_s();
		err = doorbell(qp, true);
		CHECK(!err, "post_send doorbell: %s", strerror(-err));
		timed("post_send doorbell", t0);
		if (recv) {
			t0 = now_s();
			err = doorbell(qp, false);
			CHECK(!err, "post_recv doorbell: %s", strerror(-err));
			timed("post_recv doorbell", t0);
		}
		n++;
	}
	return n;
}

static union ibv_gid v4_gid(int *index)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid gid;
	int i;

	for (i = 0; i < 32; i++) {
		if (!ibv_query_gid(ctx, 1, i, &gid) && !memcmp(gid.raw, v4map, 12)) {
			*index = i;
			return gid;
		}
	}
	die("no IPv4-mapped GID (add an IPv4 address to tbr0)");
}

/* a QP of ia's shape on a new CQ; *ring: the ring its creation mapped into this process */
static struct ibv_qp *qp_with_ring(struct ibv_qp_init_attr *ia, struct ibv_cq **cq,
				   struct tbrdma_ring **ring)
{
	struct maps before, after;
	struct ibv_qp *qp;

	*cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(*cq, "create_cq");
	ia->send_cq = ia->recv_cq = *cq;
	maps_read(&before);
	qp = ibv_create_qp(pd, ia);
	CHECK(qp, "create %s qp", ia->qp_type == IBV_QPT_UD ? "UD" : "RC");
	maps_read(&after);
	*ring = maps_new_ring(&before, &after);
	return qp;
}

static void race_rq(double seconds)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 4096,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct tbrdma_ring *ring;
	struct racer r;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned long n;
	uint32_t taken;

	qp = qp_with_ring(&ia, &cq, &ring);
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "to INIT");
	racer_start(&r, ring, ia.cap.max_recv_wr,
		    seconds);
	to_err(qp);
	n = doorbells(qp, seconds, true);
	taken = racer_stop(&r);
	CHECK(taken > ia.cap.max_recv_wr, "the kernel took only %u WQEs", taken);
	CHECK(!ibv_destroy_qp(qp) && !ibv_destroy_cq(cq), "destroy");
	printf("ok race rq: modify_qp(ERR) + %lu post_send/post_recv doorbells in ERR, %u WQEs flushed, longest call %.3f s\n",
	       n, taken, worst);
}

static void race_ud_sq(double seconds)
{
	enum { ENTRIES = 1024 };
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = ENTRIES, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };
	static struct ibv_send_wr wr[ENTRIES];
	struct ibv_send_wr *bad;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct tbrdma_ring *ring;
	struct racer r;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	unsigned long n;
	uint32_t taken;
	int i, gi;

	qp = qp_with_ring(&ia, &cq, &ring);
	CHECK(ia.cap.max_send_wr == ENTRIES, "SQ of %u", ia.cap.max_send_wr);
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_QKEY), "UD to INIT");
	a.qp_state = IBV_QPS_RTR;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "UD to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), "UD to RTS");
	/* our own address: no loopback link, every datagram is dropped */
	aa.grh.dgid = v4_gid(&gi);
	aa.grh.sgid_index = gi;
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah, "create_ah to ourselves");
	/* every slot holds a valid unsignaled send: the racer reuses them */
	for (i = 0; i < ENTRIES; i++) {
		wr[i].opcode = IBV_WR_SEND;
		wr[i].wr.ud.ah = ah;
		wr[i].wr.ud.remote_qpn = qp->qp_num;
		wr[i].wr.ud.remote_qkey = 0x11111111;
		wr[i].next = i + 1 < ENTRIES ? &wr[i + 1] : NULL;
	}
	CHECK(!ibv_post_send(qp, wr, &bad), "fill the SQ");
	racer_start(&r, ring, ENTRIES, seconds);
	n = doorbells(qp, seconds, false);
	to_err(qp);
	n += doorbells(qp, 0.5, true);
	taken = racer_stop(&r);
	CHECK(taken > 2 * ENTRIES, "the kernel took only %u WQEs", taken);
	CHECK(!ibv_destroy_qp(qp) && !ibv_destroy_ah(ah) && !ibv_destroy_cq(cq),
	      "destroy");
	printf("ok race ud sq: %lu doorbells in RTS then ERR, %u datagrams sent nowhere, longest call %.3f s\n",
	       n, taken, worst);
}

static void hog(double limit_mb)
{
	enum { MAX_OBJ = 4096 };
	static struct ibv_cq *cq[MAX_OBJ];
	static struct ibv_qp *qp[MAX_OBJ];
	static struct ibv_srq *srq[MAX_OBJ];
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16384, .max_sge = 1 } };
	double mb = 0;
	const char *what = "";
	int n, i, err = 0;

	for (n = 0; n < MAX_OBJ && mb <= 2 * limit_mb; n++) {
		struct ibv_qp_init_attr ia = {
			.cap = { .max_send_wr = 16384, .max_recv_wr = 16384,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		what = "create_cq";
		cq[n] = ibv_create_cq(ctx, 65535, NULL, NULL, 0);
		if (!cq[n]) {
			err = errno;
			break;
		}
		mb += 65536.0 * sizeof(struct tbrdma_cqe) / (1 << 20);
		what = "create_qp";
		ia.send_cq = ia.recv_cq = cq[n];
		qp[n] = ibv_create_qp(pd, &ia);
		if (!qp[n]) {
			err = errno;
			break;
		}
		/* SQ: 80-byte header + one SGE in a 128-byte slot; RQ: 32 */
		mb += 16384.0 * (128 + 32) / (1 << 20);
		what = "create_srq";
		srq[n] = ibv_create_srq(pd, &sa);
		if (!srq[n]) {
			err = errno;
			break;
		}
		mb += 16384.0 * 32 / (1 << 20);
	}
	CHECK(err, "%d rounds, %.0f MiB of queues and no failure (limit %.0f MiB)",
	      n, mb, limit_mb);
	CHECK(err == ENOMEM, "%s failed with %s, not ENOMEM", what, strerror(err));
	for (i = n; i >= 0; i--) {	/* n < MAX_OBJ: err is set */
		CHECK(!srq[i] || !ibv_destroy_srq(srq[i]), "destroy_srq");
		CHECK(!qp[i] || !ibv_destroy_qp(qp[i]), "destroy_qp");
		CHECK(!cq[i] || !ibv_destroy_cq(cq[i]), "destroy_cq");
	}
	printf("ok hog: %s ENOMEM after %d rounds, at least %.0f MiB of queues (limit %.0f MiB)\n",
	       what, n, mb, limit_mb);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(die_ctx, sizeof(die_ctx), "hostile %s", argc > 1 ? argv[1] : "");
	ctx = open_device("tbrdma0");
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	if (argc == 3 && !strcmp(argv[1], "race")) {
		race_rq(atof(argv[2]));
		race_ud_sq(atof(argv[2]));
	} else if (argc == 3 && !strcmp(argv[1], "hog")) {
		hog(atof(argv[2]));
	} else {
		fprintf(stderr, "usage: hostile race SECONDS | hog LIMIT_MB\n");
		return 2;
	}
	CHECK(!ibv_dealloc_pd(pd) && !ibv_close_device(ctx), "close");
	return 0;
}
