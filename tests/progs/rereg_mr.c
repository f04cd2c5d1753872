// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rereg_mr: ibv_rereg_mr through the provider, both ends on one device
 * (loopback RC QPs), every result checked:
 * - IBV_REREG_MR_CHANGE_TRANSLATION: the MR covers a new buffer; an RDMA
 *   WRITE with the new rkey lands there (the old buffer stays untouched), the
 *   old rkey is stale (REM_ACCESS_ERR) and so is the old lkey (LOC_PROT_ERR);
 * - IBV_REREG_MR_CHANGE_ACCESS: REMOTE_WRITE taken away refuses the next
 *   WRITE (REM_ACCESS_ERR) while READ goes on; a read-only MR given
 *   LOCAL_WRITE | REMOTE_WRITE then takes a WRITE;
 * - IBV_REREG_MR_CHANGE_PD: a QP of the old PD can no longer use the MR
 *   (REM_ACCESS_ERR remotely, LOC_PROT_ERR locally), a QP of the new one can
 *   (once REMOTE_WRITE is given back);
 * - bad input: no flags, REMOTE_WRITE without LOCAL_WRITE, access without
 *   CHANGE_ACCESS, a NULL or unmapped new range: a clear error
 *   (IBV_REREG_MR_ERR_INPUT or _CMD with errno set) and the MR unchanged, its
 *   keys still working.
 * usage: rereg_mr [DEVICE]   (default tbrdma0; needs an IPv4 address on its
 * netdev). Prints one line per case; FAIL: ... and exit 1 on any mismatch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common.h"

#define BUF 8192

static struct ibv_context *ctx;
static union ibv_gid gid;
static int gid_index;

/* a loopback RC pair on one PD: a writes/reads/sends, b is the target */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	char *src;			/* a's local buffer */
	struct ibv_mr *src_mr;
};


static struct ibv_qp *make_qp(struct pair *p)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = p->cq, .recv_cq = p->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };
	struct ibv_qp *qp = ibv_create_qp(p->pd, &ia);

	CHECK(qp, "ibv_create_qp: %s", strerror(errno));
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "-> INIT");
	return qp;
}

/* nothing left on the CQ (destroyed QPs may leave flushed receives) */
static void drain(struct pair *p)
{
	struct ibv_wc w;

	while (ibv_poll_cq(p->cq, 1, &w) > 0)
		;
}

/* new connected QPs on @pd (after an error completion the old ones are
 * in ERROR); the CQ and a's buffer are made once */
static void pair_up(struct pair *p, struct ibv_pd *pd)
{
	if (p->a) {
		CHECK(!ibv_destroy_qp(p->a) && !ibv_destroy_qp(p->b), "destroy_qp");
		drain(p);
	} else {
		p->pd = pd;
		p->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		CHECK(p->cq, "ibv_create_cq");
		p->src = malloc(BUF);
		CHECK(p->src, "malloc");
		p->src_mr = ibv_reg_mr(pd, p->src, BUF, IBV_ACCESS_LOCAL_WRITE);
		CHECK(p->src_mr, "ibv_reg_mr src: %s", strerror(errno));
	}
	p->a = make_qp(p);
	p->b = make_qp(p);
	rc_connect(p->a, gid_index, p->b->qp_num, 0x200, &gid, 0x100);
	rc_connect(p->b, gid_index, p->a->qp_num, 0x100, &gid, 0x200);
}

/* a posts an RDMA @op of @len bytes between its src and @raddr/@rkey */
static void rdma(struct pair *p, enum ibv_wr_opcode op, uint64_t raddr,
		 uint32_t rkey, uint32_t len, enum ibv_wc_status status,
		 const char *what)
{
	struct ibv_sge s = { .addr = (uintptr_t)p->src, .length = len,
			     .lkey = p->src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = op, .sg_list = &s, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = raddr, .rkey = rkey } },
		*bad;

	CHECK(!ibv_post_send(p->a, &wr, &bad), "%s: ibv_post_send", what);
	poll_wc_for(p->cq, op, status, what);
}

/* a SENDs from @addr with @lkey: the local access check */
static void send_from(struct pair *p, void *addr, uint32_t lkey,
		      enum ibv_wc_status status, const char *what)
{
	struct ibv_sge rs = { .addr = (uintptr_t)p->src, .length = 64,
			      .lkey = p->src_mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_sge s = { .addr = (uintptr_t)addr, .length = 64, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = 8, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	CHECK(!ibv_post_recv(p->b, &rwr, &rbad), "%s: ibv_post_recv", what);
	CHECK(!ibv_post_send(p->a, &wr, &bad), "%s: ibv_post_send", what);
	poll_wc_for(p->cq, 8, status, what);
	if (status == IBV_WC_SUCCESS)
		poll_wc_for(p->cq, 7, status, what);
}

static void fill(char *b, char c, size_t n)
{
	memset(b, c, n);
}

static void expect_bytes(const char *b, char c, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		CHECK(b[i] == c, "%s: byte %zu is %#x, expected %#x", what, i,
		      (unsigned char)b[i], (unsigned char)c);
}

static void rereg_ok(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		     size_t len, int access, const char *what)
{
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	int ret = ibv_rereg_mr(mr, flags, pd, addr, len, access);

	CHECK(!ret, "%s: ibv_rereg_mr returned %d: %s", what, ret, strerror(errno));
	CHECK(mr->lkey != lkey && mr->rkey != rkey,
	      "%s: keys unchanged (%#x/%#x)", what, lkey, rkey);
}

/* ibv_rereg_mr must fail with @ret and errno @err and leave keys as they were */
static void rereg_bad(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		      size_t len, int access, int ret, int err, const char *what)
{
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	int r;

	errno = 0;
	r = ibv_rereg_mr(mr, flags, pd, addr, len, access);
	CHECK(r == ret && errno == err, "%s: ibv_rereg_mr returned %d errno %d (%s), expected %d errno %d",
	      what, r, errno, strerror(errno), ret, err);
	CHECK(mr->lkey == lkey && mr->rkey == rkey, "%s: keys changed", what);
	printf("bad input: %s: %d, errno %s\n", what, r, strerror(err));
}

int main(int argc, char **argv)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;
	struct pair p1 = { 0 }, p2 = { 0 };
	struct ibv_pd *pd1, *pd2;
	uint32_t old_rkey, old_lkey;
	char *buf1, *buf2, *hole, *ro;
	struct ibv_mr *mr, *romr;

	snprintf(die_ctx, sizeof(die_ctx), "rereg_mr");
	ctx = open_device(argc > 1 ? argv[1] : "tbrdma0");
	gid_index = find_v4_gid(ctx, &gid);
	pd1 = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd1 && pd2, "ibv_alloc_pd");
	pair_up(&p1, pd1);
	buf1 = calloc(1, BUF);
	buf2 = calloc(1, 2 * BUF);
	CHECK(buf1 && buf2, "calloc");

	mr = ibv_reg_mr(pd1, buf1, BUF, rw);
	CHECK(mr, "ibv_reg_mr: %s", strerror(errno));
	fill(p1.src, 'a', BUF);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf1, mr->rkey, BUF, IBV_WC_SUCCESS,
	     "write before rereg");
	expect_bytes(buf1, 'a', BUF, "write before rereg");

	/* translation: a new, larger buffer */
	old_rkey = mr->rkey;
	old_lkey = mr->lkey;
	rereg_ok(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf2, 2 * BUF, 0,
		 "translation");
	CHECK(mr->addr == buf2 && mr->length == 2 * BUF, "translation: mr addr/length");
	fill(p1.src, 'b', BUF);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf2 + BUF, mr->rkey, BUF,
	     IBV_WC_SUCCESS, "write to the new range");
	expect_bytes(buf2 + BUF, 'b', BUF, "write to the new range");
	expect_bytes(buf1, 'a', BUF, "old range after the new write");
	send_from(&p1, buf2, mr->lkey, IBV_WC_SUCCESS, "send with the new lkey");
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf1, old_rkey, 64,
	     IBV_WC_REM_ACCESS_ERR, "write with the old rkey");
	expect_bytes(buf1, 'a', BUF, "old range after the stale-key write");
	pair_up(&p1, pd1);
	send_from(&p1, buf1, old_lkey, IBV_WC_LOC_PROT_ERR, "send with the old lkey");
	pair_up(&p1, pd1);
	printf("translation: new range written, old rkey REM_ACCESS_ERR, old lkey LOC_PROT_ERR\n");

	/* access: no more remote writes; reads go on */
	rereg_ok(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
		 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, "access -write");
	rdma(&p1, IBV_WR_RDMA_READ, (uintptr_t)buf2 + BUF, mr->rkey, BUF,
	     IBV_WC_SUCCESS, "read after access -write");
	expect_bytes(p1.src, 'b', BUF, "read after access -write");
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf2, mr->rkey, 64,
	     IBV_WC_REM_ACCESS_ERR, "write after access -write");
	pair_up(&p1, pd1);
	/*
	 * read-only to writable: untouched anonymous memory registered
	 * read-only is pinned as the shared zero page; made writable, the MR
	 * must re-pin it (breaking the sharing) or the write would not show
	 */
	ro = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED, "mmap");
	romr = ibv_reg_mr(pd1, ro, BUF, 0);
	CHECK(romr, "ibv_reg_mr read-only: %s", strerror(errno));
	rereg_ok(romr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, rw, "access 0 -> rw");
	fill(p1.src, 'c', BUF);
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)ro, romr->rkey, BUF, IBV_WC_SUCCESS,
	     "write after access 0 -> rw");
	expect_bytes(ro, 'c', BUF, "write after access 0 -> rw");
	CHECK(!ibv_dereg_mr(romr) && !munmap(ro, BUF), "dereg read-only MR");
	printf("access: write refused without REMOTE_WRITE, read kept; read-only -> writable\n");

	/* PD: QPs of pd1 lose the MR, QPs of pd2 get it (writable again) */
	pair_up(&p2, pd2);
	fill(p2.src, 'd', BUF);
	rereg_ok(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0, "pd");
	/* several frames: each is refused, and so is the message */
	rdma(&p2, IBV_WR_RDMA_WRITE, (uintptr_t)buf2, mr->rkey, BUF,
	     IBV_WC_REM_ACCESS_ERR, "write from the new PD, no REMOTE_WRITE yet");
	expect_bytes(buf2, 0, BUF, "refused write from the new PD");
	pair_up(&p2, pd2);
	rereg_ok(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, rw, "access rw");
	CHECK(mr->pd == pd2, "pd: mr->pd not updated");
	rdma(&p1, IBV_WR_RDMA_WRITE, (uintptr_t)buf2, mr->rkey, 64,
	     IBV_WC_REM_ACCESS_ERR, "write from a QP of the old PD");
	pair_up(&p1, pd1);
	send_from(&p1, buf2, mr->lkey, IBV_WC_LOC_PROT_ERR, "send by a QP of the old PD");
	pair_up(&p1, pd1);
	rdma(&p2, IBV_WR_RDMA_WRITE, (uintptr_t)buf2, mr->rkey, BUF, IBV_WC_SUCCESS,
	     "write from a QP of the new PD");
	expect_bytes(buf2, 'd', BUF, "write from a QP of the new PD");
	send_from(&p2, buf2, mr->lkey, IBV_WC_SUCCESS, "send by a QP of the new PD");
	printf("pd: old PD's QPs REM_ACCESS_ERR / LOC_PROT_ERR, new PD's QPs write and send\n");

	/* bad input: refused, the MR as it was */
	rereg_bad(mr, 0, NULL, NULL, 0, 0, IBV_REREG_MR_ERR_CMD, EINVAL, "no flags");
	rereg_bad(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
		  IBV_ACCESS_REMOTE_WRITE, IBV_REREG_MR_ERR_CMD, EINVAL,
		  "REMOTE_WRITE without LOCAL_WRITE");
	rereg_bad(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, rw,
		  IBV_REREG_MR_ERR_INPUT, EINVAL, "access without CHANGE_ACCESS");
	rereg_bad(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, BUF, 0,
		  IBV_REREG_MR_ERR_INPUT, EINVAL, "translation to NULL");
	hole = mmap(NULL, BUF, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(hole != MAP_FAILED, "mmap");
	CHECK(!munmap(hole, BUF), "munmap");
	rereg_bad(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, hole, BUF, 0,
		  IBV_REREG_MR_ERR_CMD, EFAULT, "translation to unmapped memory");
	CHECK(mr->addr == buf2 && mr->length == 2 * BUF && mr->pd == pd2,
	      "bad input changed the MR");
	fill(p2.src, 'e', BUF);
	rdma(&p2, IBV_WR_RDMA_WRITE, (uintptr_t)buf2 + BUF, mr->rkey, BUF,
	     IBV_WC_SUCCESS, "write after the refused calls");
	expect_bytes(buf2 + BUF, 'e', BUF, "write after the refused calls");

	CHECK(!ibv_dereg_mr(mr), "ibv_dereg_mr");
	CHECK(!ibv_destroy_qp(p1.a) && !ibv_destroy_qp(p1.b) &&
	      !ibv_destroy_qp(p2.a) && !ibv_destroy_qp(p2.b), "destroy_qp");
	CHECK(!ibv_dereg_mr(p1.src_mr) && !ibv_dereg_mr(p2.src_mr), "dereg src");
	CHECK(!ibv_destroy_cq(p1.cq) && !ibv_destroy_cq(p2.cq), "destroy_cq");
	CHECK(!ibv_dealloc_pd(pd1) && !ibv_dealloc_pd(pd2), "dealloc_pd");
	CHECK(!ibv_close_device(ctx), "close_device");
	printf("rereg_mr: ok\n");
	return 0;
}
