// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_ex: the extended QP and CQ verbs through the provider, both ends on
 * one device (loopback), every result checked:
 * - ibv_create_qp_ex with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, then every
 *   ibv_wr_* builder the device has (send, send_imm, rdma_write,
 *   rdma_write_imm, rdma_read, atomic_cmp_swp, atomic_fetch_add) on RC, UC
 *   and UD QPs with each setter (sge, sge_list, inline_data(_list),
 *   ud_addr), the data verified byte for byte; batches of several WRs,
 *   ibv_wr_abort (nothing of the batch reaches the wire), ibv_post_send
 *   and ibv_wr_* mixed on one QP;
 * - bad input: send_ops_flags the device cannot do (EOPNOTSUPP), too many
 *   SGEs, inline data over max_inline, a setter with no WR, a UD WR with no
 *   address, posting before RTS (EINVAL), more WRs than the SQ holds
 *   (ENOMEM, and nothing of the batch is posted), a bad lkey (an error
 *   completion, then the QP's later WRs are flushed);
 * - ibv_create_qp_ex with IBV_QP_INIT_ATTR_CREATE_FLAGS and no flag (every
 *   QP here), a create flag refused (EOPNOTSUPP);
 * - completion timestamps: the clock reported (1 GHz) and read by
 *   ibv_query_rt_values_ex (tests/progs/cq_ts checks them with traffic);
 * - ibv_create_cq_ex: unsupported wc_flags refused (EOPNOTSUPP); every field
 *   read through ibv_start_poll/next_poll/end_poll and ibv_wc_read_* equals
 *   what ibv_poll_cq returns for the same operation repeated.
 * usage: verbs_ex [DEVICE]   (default tbrdma0; needs an IPv4 address on its
 * netdev). Prints one line per case; FAIL: ... and exit 1 on any mismatch.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "tbrdma-abi.h"

#define BUF 65536
#define QKEY 0x11111111

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static char *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static union ibv_gid gid;
static int gid_index;

/* the device's own IPv4-mapped GID: every AV loops back to this device */

static struct ibv_cq_ex *make_cq(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 256,
					  .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &ca);

	CHECK(cq, "ibv_create_cq_ex (standard wc_flags): %s", strerror(errno));
	return cq;
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq_ex *cq,
			      uint64_t ops, struct ibv_qp_init_attr_ex *out)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq),
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 3, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.qp_type = type, .pd = pd,
		/* CREATE_FLAGS with none set, as rdma-core's tests may ask */
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

	CHECK(qp, "ibv_create_qp_ex type %d ops %#llx: %s", type,
	      (unsigned long long)ops, strerror(errno));
	CHECK(ibv_qp_to_qp_ex(qp), "ibv_qp_to_qp_ex: NULL");
	CHECK(ia.cap.max_inline_data >= 64, "max_inline %u", ia.cap.max_inline_data);
	if (out)
		*out = ia;
	return qp;
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (qp->qp_type == IBV_QPT_UC)
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	CHECK(!ibv_modify_qp(qp, &a, mask), "modify_qp -> INIT (type %d)", qp->qp_type);
}

/* RC or UC QP @qp to RTS towards @peer on this device */
static void connect_qp(struct ibv_qp *qp, struct ibv_qp *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = peer->qp_num, .rq_psn = 0x100 };

	to_init(qp);
	if (qp->qp_type == IBV_QPT_RC) {
		rc_connect(qp, gid_index, peer->qp_num, 0x100, &gid, 0x100);
		return;
	}
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN), "UC -> RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), "UC -> RTS");
}

static void ud_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	to_init(qp);
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "UD -> RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), "UD -> RTS");
}

static void post_recv(struct ibv_qp *qp, uint64_t wr_id, char *p, uint32_t len,
		      struct ibv_mr *m)
{
	struct ibv_sge s = { .addr = (uintptr_t)p, .length = len, .lkey = m->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &s, .num_sge = !!len }, *bad;

	CHECK(!ibv_post_recv(qp, &wr, &bad), "ibv_post_recv");
}

/* the next completion through the extended CQ, every field read */
static int poll_ex(struct ibv_cq_ex *cq, struct ibv_wc *w)
{
	struct ibv_poll_cq_attr pa = { 0 };
	int ret = ibv_start_poll(cq, &pa);

	if (ret == ENOENT)
		return 0;
	CHECK(!ret, "ibv_start_poll: %d", ret);
	memset(w, 0, sizeof(*w));
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->vendor_err = ibv_wc_read_vendor_err(cq);
	w->byte_len = ibv_wc_read_byte_len(cq);
	w->imm_data = ibv_wc_read_imm_data(cq);
	w->qp_num = ibv_wc_read_qp_num(cq);
	w->src_qp = ibv_wc_read_src_qp(cq);
	w->wc_flags = ibv_wc_read_wc_flags(cq);
	w->slid = ibv_wc_read_slid(cq);
	w->sl = ibv_wc_read_sl(cq);
	w->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
	ibv_end_poll(cq);
	return 1;
}

/* wait (5 s at most) for one completion, read with ibv_start_poll (@ex) or
 * ibv_poll_cq; it must be @wr_id with status SUCCESS and @opcode */
static struct ibv_wc wait_wc(struct ibv_cq_ex *cq, bool ex, uint64_t wr_id,
			     enum ibv_wc_opcode opcode)
{
	struct ibv_wc w;
	double end = now_s() + 5;
	int n;

	do {
		n = ex ? poll_ex(cq, &w) : ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &w);
		CHECK(n >= 0, "ibv_poll_cq: %d", n);
	} while (!n && now_s() < end);
	CHECK(n == 1, "no completion for wr_id %#llx within 5 s",
	      (unsigned long long)wr_id);
	CHECK(w.wr_id == wr_id && w.status == IBV_WC_SUCCESS && w.opcode == opcode,
	      "expected wr_id %#llx opcode %d, got %s", (unsigned long long)wr_id,
	      opcode, wc_str(&w));
	return w;
}

/* no completion arrives on @cq within 100 ms */
static void no_wc(struct ibv_cq_ex *cq, const char *what)
{
	struct ibv_wc w;

	usleep(100000);
	CHECK(ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &w) == 0,
	      "%s: unexpected completion %s", what, wc_str(&w));
}

static void fill(char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)(seed + i * 7 + (i >> 8));
}

static void same(const void *a, const void *b, size_t n, const char *what)
{
	CHECK(!memcmp(a, b, n), "%s: data differs", what);
}

/* ---- RC: every builder and setter, data verified ----------------------- */

static struct ibv_cq_ex *cqa, *cqb;
static struct ibv_qp *qa, *qb;
static struct ibv_qp_ex *xa;
static struct ibv_qp_init_attr_ex qa_attr;

#define RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
		IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
		IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static void wr_begin(struct ibv_qp_ex *x, uint64_t wr_id)
{
	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
}

static void wr_end(struct ibv_qp_ex *x, const char *what)
{
	int ret = ibv_wr_complete(x);

	CHECK(!ret, "%s: ibv_wr_complete: %s", what, strerror(ret));
}

/* one send of @len bytes from abuf (SGE) to bbuf; the receive completion */
static struct ibv_wc rc_send(bool ex, bool imm, uint32_t len, uint64_t id)
{
	struct ibv_wc w;

	strcpy(die_ctx, imm ? "rc send_imm" : "rc send");
	fill(abuf, len, id);
	memset(bbuf, 0, len);
	post_recv(qb, id, bbuf, BUF, bmr);
	wr_begin(xa, id);
	if (imm)
		ibv_wr_send_imm(xa, htonl(0x12345600 + id));
	else
		ibv_wr_send(xa);
	ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf, len);
	wr_end(xa, die_ctx);
	wait_wc(cqa, ex, id, IBV_WC_SEND);
	w = wait_wc(cqb, ex, id, IBV_WC_RECV);
	CHECK(w.byte_len == len && w.qp_num == qb->qp_num, "recv %s qp_num %u",
	      wc_str(&w), w.qp_num);
	CHECK(!!(w.wc_flags & IBV_WC_WITH_IMM) == imm &&
	      (!imm || w.imm_data == htonl(0x12345600 + id)),
	      "recv wc_flags %#x imm %#x", w.wc_flags, ntohl(w.imm_data));
	same(abuf, bbuf, len, die_ctx);
	return w;
}

static struct ibv_wc rc_write(bool ex, bool imm, uint32_t len, uint64_t id)
{
	struct ibv_wc w = { 0 };

	strcpy(die_ctx, imm ? "rc rdma_write_imm" : "rc rdma_write");
	fill(abuf, len, id);
	memset(bbuf + 4096, 0, len);
	if (imm)
		post_recv(qb, id, NULL, 0, bmr);
	wr_begin(xa, id);
	if (imm)
		ibv_wr_rdma_write_imm(xa, bmr->rkey, (uintptr_t)bbuf + 4096,
				      htonl(0xabc00 + id));
	else
		ibv_wr_rdma_write(xa, bmr->rkey, (uintptr_t)bbuf + 4096);
	ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf, len);
	wr_end(xa, die_ctx);
	wait_wc(cqa, ex, id, IBV_WC_RDMA_WRITE);
	if (imm) {
		w = wait_wc(cqb, ex, id, IBV_WC_RECV_RDMA_WITH_IMM);
		CHECK(w.byte_len == len && (w.wc_flags & IBV_WC_WITH_IMM) &&
		      w.imm_data == htonl(0xabc00 + id), "recv %s imm %#x",
		      wc_str(&w), ntohl(w.imm_data));
	}
	same(abuf, bbuf + 4096, len, die_ctx);
	return w;
}

static struct ibv_wc rc_read(bool ex, uint32_t len, uint64_t id)
{
	struct ibv_wc w;

	strcpy(die_ctx, "rc rdma_read");
	fill(bbuf + 8192, len, id);
	memset(abuf + 8192, 0, len);
	wr_begin(xa, id);
	ibv_wr_rdma_read(xa, bmr->rkey, (uintptr_t)bbuf + 8192);
	ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf + 8192, len);
	wr_end(xa, die_ctx);
	w = wait_wc(cqa, ex, id, IBV_WC_RDMA_READ);
	CHECK(w.byte_len == len, "read %s", wc_str(&w));
	same(abuf + 8192, bbuf + 8192, len, die_ctx);
	return w;
}

/* compare-and-swap (@cas) or fetch-and-add on bbuf's 8-byte word */
static struct ibv_wc rc_atomic(bool ex, bool cas, uint64_t cmp_add,
			       uint64_t swap, uint64_t id)
{
	uint64_t *remote = (uint64_t *)(bbuf + 16384), *local = (uint64_t *)abuf;
	uint64_t before = *remote, after;
	struct ibv_wc w;

	strcpy(die_ctx, cas ? "rc atomic_cmp_swp" : "rc atomic_fetch_add");
	*local = ~before;
	wr_begin(xa, id);
	if (cas)
		ibv_wr_atomic_cmp_swp(xa, bmr->rkey, (uintptr_t)remote, cmp_add, swap);
	else
		ibv_wr_atomic_fetch_add(xa, bmr->rkey, (uintptr_t)remote, cmp_add);
	ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)local, 8);
	wr_end(xa, die_ctx);
	w = wait_wc(cqa, ex, id, cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD);
	after = cas ? (before == cmp_add ? swap : before) : before + cmp_add;
	CHECK(*local == before && *remote == after,
	      "returned %#llx (expected %#llx), remote %#llx (expected %#llx)",
	      (unsigned long long)*local, (unsigned long long)before,
	      (unsigned long long)*remote, (unsigned long long)after);
	return w;
}

static void rc_inline_and_lists(void)
{
	struct ibv_sge sg[3];
	struct ibv_data_buf db[3];
	int i, off;

	strcpy(die_ctx, "rc send inline_data");
	fill(abuf, 60, 3);
	post_recv(qb, 30, bbuf, BUF, bmr);
	wr_begin(xa, 30);
	xa->wr_flags |= IBV_SEND_INLINE;
	ibv_wr_send(xa);
	ibv_wr_set_inline_data(xa, abuf, 60);
	wr_end(xa, die_ctx);
	memset(abuf, 0, 60);	/* inline: the data was copied at post time */
	wait_wc(cqa, false, 30, IBV_WC_SEND);
	CHECK(wait_wc(cqb, false, 30, IBV_WC_RECV).byte_len == 60, "byte_len");
	fill(abuf, 60, 3);
	same(abuf, bbuf, 60, die_ctx);

	strcpy(die_ctx, "rc send inline_data_list + sge_list");
	for (i = 0; i < 3; i++) {
		fill(abuf + i * 1000, 10 + i, 10 + i);
		db[i] = (struct ibv_data_buf){ abuf + i * 1000, 10 + i };
		sg[i] = (struct ibv_sge){ (uintptr_t)abuf + i * 1000, 10 + i, amr->lkey };
	}
	post_recv(qb, 31, bbuf, BUF, bmr);
	post_recv(qb, 32, bbuf + 1024, BUF - 1024, bmr);
	wr_begin(xa, 31);
	ibv_wr_send(xa);
	ibv_wr_set_inline_data_list(xa, 3, db);
	xa->wr_id = 32;
	ibv_wr_send(xa);
	ibv_wr_set_sge_list(xa, 3, sg);
	wr_end(xa, die_ctx);
	wait_wc(cqa, true, 31, IBV_WC_SEND);
	wait_wc(cqa, true, 32, IBV_WC_SEND);
	CHECK(wait_wc(cqb, true, 31, IBV_WC_RECV).byte_len == 33, "inline list byte_len");
	CHECK(wait_wc(cqb, true, 32, IBV_WC_RECV).byte_len == 33, "sge list byte_len");
	for (i = 0, off = 0; i < 3; off += 10 + i, i++) {
		same(abuf + i * 1000, bbuf + off, 10 + i, "inline list piece");
		same(abuf + i * 1000, bbuf + 1024 + off, 10 + i, "sge list piece");
	}
	printf("rc inline_data, inline_data_list, sge_list: ok\n");
}

/* several WRs in one batch, their completions through one start/next/end */
static void rc_batch(void)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_wc w;
	double end;
	int i, n = 0, ret;

	strcpy(die_ctx, "rc batch");
	fill(abuf, 4 * 512, 40);
	memset(bbuf, 0, 4 * 512);
	ibv_wr_start(xa);
	xa->wr_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < 4; i++) {
		xa->wr_id = 40 + i;
		ibv_wr_rdma_write(xa, bmr->rkey, (uintptr_t)bbuf + i * 512);
		ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf + i * 512, 512);
	}
	wr_end(xa, die_ctx);
	for (end = now_s() + 5; n < 4 && now_s() < end; ) {
		ret = ibv_start_poll(cqa, &pa);
		if (ret == ENOENT)
			continue;
		CHECK(!ret, "ibv_start_poll %d", ret);
		do {
			CHECK(cqa->wr_id == (uint64_t)40 + n && cqa->status == IBV_WC_SUCCESS &&
			      ibv_wc_read_opcode(cqa) == IBV_WC_RDMA_WRITE,
			      "completion %d: wr_id %llu status %d", n,
			      (unsigned long long)cqa->wr_id, cqa->status);
			n++;
		} while (!(ret = ibv_next_poll(cqa)));
		CHECK(ret == ENOENT, "ibv_next_poll: %d", ret);
		ibv_end_poll(cqa);
	}
	CHECK(n == 4, "%d of 4 completions", n);
	CHECK(ibv_start_poll(cqa, &pa) == ENOENT, "empty CQ: start_poll not ENOENT");
	CHECK(ibv_poll_cq(ibv_cq_ex_to_cq(cqa), 1, &w) == 0, "CQ not empty");
	same(abuf, bbuf, 4 * 512, die_ctx);
	printf("rc batch of 4 writes, one start/next/end poll: ok\n");
}

/* an aborted batch never reaches the peer; ibv_post_send mixes with wr_* */
static void rc_abort_and_mix(void)
{
	struct ibv_sge s = { (uintptr_t)abuf + 100, 4, amr->lkey };
	struct ibv_send_wr wr = { .wr_id = 52, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc w;

	strcpy(die_ctx, "rc wr_abort");
	memcpy(abuf, "ABORTED", 7);
	memcpy(abuf + 100, "KEPT", 4);
	post_recv(qb, 50, bbuf, BUF, bmr);
	post_recv(qb, 52, bbuf + 1024, BUF - 1024, bmr);
	wr_begin(xa, 49);
	ibv_wr_send(xa);
	ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf, 7);
	ibv_wr_abort(xa);
	wr_begin(xa, 50);
	ibv_wr_send(xa);
	ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf + 100, 4);
	wr_end(xa, die_ctx);
	CHECK(!ibv_post_send(qa, &wr, &bad), "ibv_post_send on a qp_ex");
	wait_wc(cqa, false, 50, IBV_WC_SEND);
	wait_wc(cqa, false, 52, IBV_WC_SEND);
	w = wait_wc(cqb, false, 50, IBV_WC_RECV);
	CHECK(w.byte_len == 4 && !memcmp(bbuf, "KEPT", 4),
	      "the aborted WR arrived: %s, data %.7s", wc_str(&w), bbuf);
	wait_wc(cqb, false, 52, IBV_WC_RECV);
	no_wc(cqa, die_ctx);
	printf("rc wr_abort (batch discarded), ibv_post_send mixed in: ok\n");
}

/* wr_complete fails with @err and nothing of the batch is posted */
static void expect_fail(struct ibv_qp_ex *x, int err, const char *what)
{
	int ret = ibv_wr_complete(x);

	strcpy(die_ctx, what);
	CHECK(ret == err, "ibv_wr_complete returned %d (%s), expected %s", ret,
	      strerror(ret), strerror(err));
	no_wc(cqa, what);
	printf("%s: %s: ok\n", what, strerror(err));
}

static void rc_bad_input(void)
{
	static char big[8192];
	struct ibv_sge sg[64];
	uint32_t i, max = qa_attr.cap.max_send_sge;
	uint32_t max_inline = qa_attr.cap.max_inline_data;

	for (i = 0; i < 64; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)abuf, 8, amr->lkey };
	strcpy(die_ctx, "rc bad input");
	CHECK(max < 64 && max_inline < sizeof(big), "max_send_sge %u max_inline %u: "
	      "too large for this test", max, max_inline);
	wr_begin(xa, 60);
	ibv_wr_send(xa);
	ibv_wr_set_sge_list(xa, max + 1, sg);
	expect_fail(xa, EINVAL, "rc sge_list of max_send_sge + 1");

	wr_begin(xa, 61);
	ibv_wr_send(xa);
	ibv_wr_set_inline_data(xa, big, max_inline + 1);
	expect_fail(xa, EINVAL, "rc inline_data of max_inline + 1 bytes");

	wr_begin(xa, 62);
	ibv_wr_rdma_read(xa, bmr->rkey, (uintptr_t)bbuf);
	ibv_wr_set_inline_data(xa, big, 8);
	expect_fail(xa, EINVAL, "rc rdma_read with inline data");

	wr_begin(xa, 63);
	ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf, 8);
	expect_fail(xa, EINVAL, "rc setter with no WR");

	/* more WRs than the SQ has slots: ENOMEM, and none of them is posted */
	memset(bbuf, 0, 64);
	abuf[0] = 'X';
	wr_begin(xa, 64);
	for (i = 0; i < 4096; i++) {
		ibv_wr_rdma_write(xa, bmr->rkey, (uintptr_t)bbuf);
		ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf, 1);
	}
	expect_fail(xa, ENOMEM, "rc 4096 WRs in one batch");
	CHECK(bbuf[0] == 0, "a WR of the refused batch was executed");
	wr_begin(xa, 65);
	ibv_wr_rdma_write(xa, bmr->rkey, (uintptr_t)bbuf);
	ibv_wr_set_sge(xa, amr->lkey, (uintptr_t)abuf, 1);
	wr_end(xa, "rc write after ENOMEM");
	wait_wc(cqa, false, 65, IBV_WC_RDMA_WRITE);
	CHECK(bbuf[0] == 'X', "write after ENOMEM: no data");
	printf("rc QP works after the refused batches: ok\n");
}

/* ---- ibv_create_qp_ex / ibv_create_cq_ex refusals ---------------------- */

/*
 * Completion timestamps (docs/architecture.md "Completion timestamps"): the
 * device's clock is the kernel's CLOCK_MONOTONIC in ns, which
 * ibv_query_rt_values_ex reads; cq_ts checks the CQEs' timestamps.
 */
static void timestamps_clock(void)
{
	struct ibv_device_attr_ex da;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	int ret;

	CHECK(!ibv_query_device_ex(ctx, NULL, &da), "ibv_query_device_ex");
	CHECK(da.completion_timestamp_mask == UINT64_MAX && da.hca_core_clock == 1000000,
	      "completion_timestamp_mask %#llx hca_core_clock %llu: want all ones, 1000000 kHz",
	      (unsigned long long)da.completion_timestamp_mask,
	      (unsigned long long)da.hca_core_clock);
	ret = ibv_query_rt_values_ex(ctx, &v);
	CHECK(!ret && v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK,
	      "ibv_query_rt_values_ex: %d (%s), comp_mask %#x", ret, strerror(ret), v.comp_mask);
	printf("timestamps: 1 GHz clock reported, ibv_query_rt_values_ex reads it\n");
}

static void create_refusals(void)
{
	static const struct { enum ibv_qp_type t; uint64_t ops; const char *n; } bad[] = {
		{ IBV_QPT_UD, IBV_QP_EX_WITH_BIND_MW, "UD BIND_MW" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_LOCAL_INV, "UD LOCAL_INV" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_SEND_WITH_INV, "UC SEND_WITH_INV" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_TSO, "RC TSO" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE, "RC ATOMIC_WRITE" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, "UC RDMA_READ" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, "UC FETCH_AND_ADD" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, "UD RDMA_WRITE" },
	};
	static const uint64_t bad_wc[] = {
		IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG, IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_qp_init_attr_ex ia;
	struct ibv_cq_init_attr_ex ca;
	size_t i;

	strcpy(die_ctx, "create refusals");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(cqa);
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		ia.qp_type = bad[i].t;
		ia.pd = pd;
		ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = IBV_QP_EX_WITH_SEND | bad[i].ops;
		errno = 0;
		CHECK(!ibv_create_qp_ex(ctx, &ia) && errno == EOPNOTSUPP,
		      "send_ops_flags %s: not refused with EOPNOTSUPP (errno %d)",
		      bad[i].n, errno);
	}
	for (i = 0; i < sizeof(bad_wc) / sizeof(bad_wc[0]); i++) {
		memset(&ca, 0, sizeof(ca));
		ca.cqe = 16;
		ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | bad_wc[i];
		errno = 0;
		CHECK(!ibv_create_cq_ex(ctx, &ca) && errno == EOPNOTSUPP,
		      "cq wc_flags %#llx: not refused with EOPNOTSUPP (errno %d)",
		      (unsigned long long)bad_wc[i], errno);
	}
	/* a create flag: none is implemented (the kernel's check, the provider's first) */
	for (i = 0; i < 3; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(cqa);
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		ia.qp_type = i == 0 ? IBV_QPT_RC : i == 1 ? IBV_QPT_UC : IBV_QPT_UD;
		ia.pd = pd;
		ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
		ia.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
		errno = 0;
		CHECK(!ibv_create_qp_ex(ctx, &ia) && errno == EOPNOTSUPP,
		      "create_flags on QP type %d: not refused with EOPNOTSUPP (errno %d)",
		      ia.qp_type, errno);
	}
	timestamps_clock();
	printf("create_qp_ex: %zu unsupported send_ops_flags, a create flag on RC/UC/UD, "
	       "create_cq_ex: %zu unsupported wc_flags: EOPNOTSUPP: ok\n",
	       sizeof(bad) / sizeof(bad[0]), sizeof(bad_wc) / sizeof(bad_wc[0]));
}

/* ---- the same operation twice: ibv_wc_read_* equals ibv_poll_cq -------- */

static void cmp_wc(const struct ibv_wc *x, const struct ibv_wc *p, const char *what)
{
	CHECK(x->status == p->status && x->opcode == p->opcode &&
	      x->vendor_err == p->vendor_err && x->byte_len == p->byte_len &&
	      x->imm_data == p->imm_data && x->qp_num == p->qp_num &&
	      x->src_qp == p->src_qp && x->wc_flags == p->wc_flags &&
	      x->slid == p->slid && x->sl == p->sl &&
	      x->dlid_path_bits == p->dlid_path_bits,
	      "%s: cq_ex {opcode %d len %u imm %#x qp %u src %u flags %#x slid %u sl %u} != "
	      "poll_cq {opcode %d len %u imm %#x qp %u src %u flags %#x slid %u sl %u}",
	      what, x->opcode, x->byte_len, x->imm_data, x->qp_num, x->src_qp,
	      x->wc_flags, x->slid, x->sl, p->opcode, p->byte_len, p->imm_data,
	      p->qp_num, p->src_qp, p->wc_flags, p->slid, p->sl);
}

static void rc_all(void)
{
	struct ibv_wc x, p;

	x = rc_send(true, false, 3000, 1);
	p = rc_send(false, false, 3000, 1);
	cmp_wc(&x, &p, "rc send recv");
	x = rc_send(true, true, 1, 2);
	p = rc_send(false, true, 1, 2);
	cmp_wc(&x, &p, "rc send_imm recv");
	printf("rc send, send_imm (sge): data and every wc field: ok\n");
	rc_write(true, false, 4000, 3);
	rc_write(false, false, 2048, 4);
	x = rc_write(true, true, 1000, 5);
	p = rc_write(false, true, 1000, 5);
	cmp_wc(&x, &p, "rc write_imm recv");
	printf("rc rdma_write, rdma_write_imm: data and every wc field: ok\n");
	x = rc_read(true, 5000, 6);
	p = rc_read(false, 5000, 6);
	cmp_wc(&x, &p, "rc read");
	printf("rc rdma_read: data and every wc field: ok\n");
	*(uint64_t *)(bbuf + 16384) = 100;
	x = rc_atomic(true, true, 100, 200, 7);		/* swaps: 200 */
	p = rc_atomic(false, true, 100, 300, 7);	/* no swap */
	cmp_wc(&x, &p, "rc cmp_swp");
	x = rc_atomic(true, false, 5, 0, 8);
	p = rc_atomic(false, false, 5, 0, 8);
	cmp_wc(&x, &p, "rc fetch_add");
	printf("rc atomic_cmp_swp, atomic_fetch_add: values and every wc field: ok\n");
	rc_inline_and_lists();
	rc_batch();
	rc_abort_and_mix();
	rc_bad_input();
}

/* ---- UC and UD ---------------------------------------------------------- */

static void uc_all(void)
{
	struct ibv_cq_ex *cq = make_cq();
	struct ibv_qp *ua = make_qp(IBV_QPT_UC, cq, IBV_QP_EX_WITH_RDMA_WRITE |
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				    IBV_QP_EX_WITH_SEND, NULL);
	struct ibv_qp *ub = make_qp(IBV_QPT_UC, cq, IBV_QP_EX_WITH_SEND, NULL);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(ua);
	struct ibv_wc w;

	strcpy(die_ctx, "uc");
	CHECK(x->wr_rdma_write && !x->wr_rdma_read && !x->wr_send_imm,
	      "the builders do not follow send_ops_flags");
	connect_qp(ua, ub);
	connect_qp(ub, ua);
	fill(abuf, 3000, 70);
	memset(bbuf, 0, 3000);
	post_recv(ub, 71, NULL, 0, bmr);
	wr_begin(x, 70);
	ibv_wr_rdma_write(x, bmr->rkey, (uintptr_t)bbuf);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 1500);
	x->wr_id = 71;
	ibv_wr_rdma_write_imm(x, bmr->rkey, (uintptr_t)bbuf + 1500, htonl(71));
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf + 1500, 1500);
	wr_end(x, die_ctx);
	wait_wc(cq, true, 70, IBV_WC_RDMA_WRITE);
	wait_wc(cq, true, 71, IBV_WC_RDMA_WRITE);
	w = wait_wc(cq, true, 71, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK(w.qp_num == ub->qp_num && w.imm_data == htonl(71) && w.byte_len == 1500,
	      "uc write_imm recv %s", wc_str(&w));
	same(abuf, bbuf, 3000, "uc rdma_write + rdma_write_imm data");
	CHECK(!ibv_destroy_qp(ua) && !ibv_destroy_qp(ub), "destroy UC QPs");
	CHECK(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), "destroy UC CQ");
	printf("uc rdma_write, rdma_write_imm: data: ok\n");
}

static struct ibv_wc ud_send(bool ex, struct ibv_cq_ex *cq, struct ibv_qp *ua,
			     struct ibv_qp *ub, struct ibv_ah *ah, uint64_t id)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(ua);
	struct ibv_wc w;

	strcpy(die_ctx, "ud send_imm");
	fill(abuf, 1000, id);
	memset(bbuf, 0, 1040);
	post_recv(ub, id, bbuf, 1040, bmr);
	wr_begin(x, id);
	ibv_wr_send_imm(x, htonl(0x5d00 + id));
	ibv_wr_set_ud_addr(x, ah, ub->qp_num, QKEY);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 1000);
	wr_end(x, die_ctx);
	wait_wc(cq, ex, id, IBV_WC_SEND);
	w = wait_wc(cq, ex, id, IBV_WC_RECV);
	CHECK(w.byte_len == 1040 && w.src_qp == ua->qp_num && w.qp_num == ub->qp_num &&
	      (w.wc_flags & IBV_WC_GRH) && (w.wc_flags & IBV_WC_WITH_IMM) &&
	      w.imm_data == htonl(0x5d00 + id), "ud recv %s src_qp %u flags %#x",
	      wc_str(&w), w.src_qp, w.wc_flags);
	same(abuf, bbuf + 40, 1000, "ud data after the GRH");
	/* an IPv4 RoCE v2 datagram: 20 zero bytes + the IPv4 header (daddr last), and the packet
	 * type in sl as mlx5 reports it (UCX's UD transport finds the destination by it) */
	CHECK(bbuf[20] == 0x45 && !memcmp(bbuf + 36, gid.raw + 12, 4) &&
	      w.sl == (TBRDMA_CQE_SL_ROCE_V2 | TBRDMA_CQE_SL_IPV4),
	      "ud recv: GRH buffer byte 20 %#x, last 4 %08x, sl %#x", (uint8_t)bbuf[20],
	      ntohl(*(uint32_t *)(bbuf + 36)), w.sl);
	return w;
}

static void ud_all(void)
{
	struct ibv_cq_ex *cq = make_cq();
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	struct ibv_qp *ua = make_qp(IBV_QPT_UD, cq, ops, NULL);
	struct ibv_qp *ub = make_qp(IBV_QPT_UD, cq, ops, NULL);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(ua);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;
	struct ibv_wc w1, w2;

	ud_up(ua);
	ud_up(ub);
	aa.grh.dgid = gid;
	aa.grh.sgid_index = gid_index;
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah, "ibv_create_ah");
	w1 = ud_send(true, cq, ua, ub, ah, 80);
	w2 = ud_send(false, cq, ua, ub, ah, 80);
	cmp_wc(&w1, &w2, "ud send_imm recv");

	strcpy(die_ctx, "ud send inline");
	post_recv(ub, 81, bbuf, 1040, bmr);
	memcpy(abuf, "inline-ud", 9);
	wr_begin(x, 81);
	x->wr_flags |= IBV_SEND_INLINE;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah, ub->qp_num, QKEY);
	ibv_wr_set_inline_data(x, abuf, 9);
	wr_end(x, die_ctx);
	wait_wc(cq, true, 81, IBV_WC_SEND);
	CHECK(wait_wc(cq, true, 81, IBV_WC_RECV).byte_len == 49 &&
	      !memcmp(bbuf + 40, "inline-ud", 9), "ud inline data");

	wr_begin(x, 82);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 8);
	CHECK(ibv_wr_complete(x) == EINVAL, "ud send with no ud_addr: not EINVAL");
	no_wc(cq, "ud send with no ud_addr");
	CHECK(!ibv_destroy_ah(ah), "destroy AH");
	CHECK(!ibv_destroy_qp(ua) && !ibv_destroy_qp(ub), "destroy UD QPs");
	CHECK(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), "destroy UD CQ");
	printf("ud send, send_imm, inline, ud_addr: data and every wc field; "
	       "no ud_addr: EINVAL: ok\n");
}

/* the next completion, read through the cq_ex, whatever its status */
static struct ibv_wc any_wc(struct ibv_cq_ex *cq)
{
	struct ibv_wc w;
	double end = now_s() + 5;

	while (!poll_ex(cq, &w))
		CHECK(now_s() < end, "no completion within 5 s");
	return w;
}

/* before RTS: EINVAL; a bad lkey: an error completion, then flushes */
static void rc_errors(void)
{
	struct ibv_cq_ex *cq = make_cq();
	struct ibv_qp *e1 = make_qp(IBV_QPT_RC, cq, RC_OPS, NULL);
	struct ibv_qp *e2 = make_qp(IBV_QPT_RC, cq, RC_OPS, NULL);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(e1);
	struct ibv_wc w;

	strcpy(die_ctx, "rc before RTS");
	wr_begin(x, 90);
	ibv_wr_send(x);
	CHECK(ibv_wr_complete(x) == EINVAL, "wr_complete in RESET: not EINVAL");
	no_wc(cq, die_ctx);
	connect_qp(e1, e2);
	connect_qp(e2, e1);
	strcpy(die_ctx, "rc bad lkey");
	wr_begin(x, 91);
	ibv_wr_rdma_write(x, bmr->rkey, (uintptr_t)bbuf);
	ibv_wr_set_sge(x, amr->lkey + 0x10000, (uintptr_t)abuf, 64);
	x->wr_id = 92;
	ibv_wr_rdma_write(x, bmr->rkey, (uintptr_t)bbuf);
	ibv_wr_set_sge(x, amr->lkey, (uintptr_t)abuf, 64);
	wr_end(x, die_ctx);
	w = any_wc(cq);
	CHECK(w.wr_id == 91 && w.status == IBV_WC_LOC_PROT_ERR, "bad lkey: %s", wc_str(&w));
	w = any_wc(cq);
	CHECK(w.wr_id == 92 && w.status == IBV_WC_WR_FLUSH_ERR, "after the error: %s",
	      wc_str(&w));
	/* a batch posted in ERROR is flushed too (the doorbell rule) */
	wr_begin(x, 93);
	ibv_wr_send(x);
	wr_end(x, "rc post in ERROR");
	w = any_wc(cq);
	CHECK(w.wr_id == 93 && w.status == IBV_WC_WR_FLUSH_ERR, "posted in ERROR: %s",
	      wc_str(&w));
	CHECK(!ibv_destroy_qp(e1) && !ibv_destroy_qp(e2), "destroy QPs");
	CHECK(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), "destroy CQ");
	printf("rc before RTS: EINVAL; bad lkey: LOC_PROT_ERR, then WR_FLUSH_ERR "
	       "(also for a batch posted in ERROR): ok\n");
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "tbrdma0";

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(die_ctx, sizeof(die_ctx), "verbs_ex %s setup", dev);
	ctx = open_device(dev);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "ibv_alloc_pd");
	abuf = aligned_alloc(4096, BUF);
	bbuf = aligned_alloc(4096, BUF);
	CHECK(abuf && bbuf, "malloc");
	amr = ibv_reg_mr(pd, abuf, BUF, IBV_ACCESS_LOCAL_WRITE);
	bmr = ibv_reg_mr(pd, bbuf, BUF, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(amr && bmr, "ibv_reg_mr");
	gid_index = find_v4_gid(ctx, &gid);
	cqa = make_cq();
	cqb = make_cq();
	qa = make_qp(IBV_QPT_RC, cqa, RC_OPS, &qa_attr);
	qb = make_qp(IBV_QPT_RC, cqb, RC_OPS, NULL);
	xa = ibv_qp_to_qp_ex(qa);
	connect_qp(qa, qb);
	connect_qp(qb, qa);

	create_refusals();
	rc_all();
	uc_all();
	ud_all();
	rc_errors();
	CHECK(!ibv_destroy_qp(qa) && !ibv_destroy_qp(qb), "destroy RC QPs");
	CHECK(!ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)) &&
	      !ibv_destroy_cq(ibv_cq_ex_to_cq(cqb)), "destroy CQs");
	printf("verbs_ex: ok\n");
	return 0;
}
