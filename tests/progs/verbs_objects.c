// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_objects: tbrdma verbs objects through libibverbs and libtbrdma,
 * no data movement needed (no rail). Modes:
 *   verbs_objects objects   PD/MR/CQ/QP/SRQ, QP state machine, flush on
 *                           ERROR in order, resize_cq, CQ events, overflow
 *   verbs_objects nosyscall N   after setup, getppid() marks; then N rounds
 *                           of ibv_poll_cq + ibv_post_recv + req_notify_cq;
 *                           getppid() again; one post_send between two more
 *                           getppid() (strace counts the calls in between)
 *   verbs_objects hold      create objects, print "ready", poll a CQ forever
 *   verbs_objects rdmacg N  in an rdma cgroup with "tbrdma0 hca_object=N":
 *                           a PD, an MR, a CQ, then RC QPs until one fails:
 *                           it must be object N + 1, with EAGAIN (the
 *                           cgroup's refusal); an MR then fails the same
 *                           way; one QP destroyed, the MR fits. Prints
 *                           "ready" and holds it all until stdin closes.
 *   verbs_objects qps N     PD, MR, CQ and N RC QPs, each to RTS (a
 *                           loopback AV): all must succeed (a process
 *                           outside that cgroup)
 * Needs tbr0 up with an IPv4 address (its GID is the loopback AV).
 * Exit 0 on success; prints "FAIL: ..." and exits 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			printf("FAIL: %s:%d: ", __FILE__, __LINE__);        \
			printf(__VA_ARGS__);                                \
			printf(" (errno %d %s)\n", errno, strerror(errno)); \
			exit(1);                                            \
		}                                                           \
	} while (0)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static char buf[1 << 16];
static struct ibv_mr *mr;
static union ibv_gid loop_gid;	/* our own IPv4-mapped GID: loopback AV */
static int loop_gid_index = -1;

/* the RoCE core resolves the AV's MAC through the IP stack: aim at ourselves */
static void find_loop_gid(void)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };
	int i;

	for (i = 0; i < 32; i++) {
		if (ibv_query_gid(ctx, 1, i, &loop_gid))
			continue;
		if (!memcmp(loop_gid.raw, v4map, 12)) {
			loop_gid_index = i;
			return;
		}
	}
	CHECK(0, "no IPv4-mapped GID (add an IPv4 address to tbr0)");
}

/* tbrdma0's context, PD and an MR over buf with @access */
static void open_pd_mr(int access)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	CHECK(list, "ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "tbrdma0"))
			break;
	CHECK(list[i], "tbrdma0 not found (provider not loaded?)");
	ctx = ibv_open_device(list[i]);
	CHECK(ctx, "ibv_open_device");
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "ibv_alloc_pd");
	mr = ibv_reg_mr(pd, buf, sizeof(buf), access);
	CHECK(mr, "ibv_reg_mr");
}

static void open_dev(void)
{
	open_pd_mr(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ);
	find_loop_gid();
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *scq,
			      struct ibv_cq *rcq, struct ibv_srq *srq,
			      int sq_sig_all)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.qp_type = type, .sq_sig_all = sq_sig_all,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	CHECK(qp, "ibv_create_qp type %d", type);
	CHECK(ia.cap.max_inline_data >= 64, "max_inline %u", ia.cap.max_inline_data);
	return qp;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static struct ibv_qp_attr rtr_attr(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = 0x123, .rq_psn = 0x4242,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
	};

	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = loop_gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.dgid = loop_gid;
	return a;
}

#define RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
		  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTR_MASK_UC (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
		     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RTS_MASK (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = rtr_attr();
	int uc = qp->qp_type == IBV_QPT_UC;
	int ret;

	if ((ret = to_init(qp)))
		return ret;
	if ((ret = ibv_modify_qp(qp, &a, uc ? RTR_MASK_UC : RTR_MASK)))
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x777;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, uc ? IBV_QP_STATE | IBV_QP_SQ_PSN : RTS_MASK);
}

static int to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id, int nsge)
{
	struct ibv_sge sge[16];
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = nsge }, *bad;
	int i;

	for (i = 0; i < nsge; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 64 * i, 64, mr->lkey };
	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, uint64_t wr_id, int nsge, int flags)
{
	struct ibv_sge sge[16];
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = nsge,
				  .opcode = IBV_WR_SEND, .send_flags = flags }, *bad = NULL;
	int i, ret;

	for (i = 0; i < nsge; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 64 * i, 16, mr->lkey };
	ret = ibv_post_send(qp, &wr, &bad);
	if (ret)
		CHECK(bad == &wr, "bad_wr not set on error");
	return ret;
}

/* poll n completions (within ~2 s), leaving any others in the CQ */
static void poll_some(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0, tries = 0, r;

	while (got < n && tries++ < 2000) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		CHECK(r >= 0, "ibv_poll_cq %d", r);
		got += r;
		if (got < n)
			usleep(1000);
	}
	CHECK(got == n, "expected %d completions, got %d", n, got);
}

/* poll exactly n completions (within ~2 s) */
static void poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int got = 0, tries = 0, r;

	while (got < n && tries++ < 2000) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		CHECK(r >= 0, "ibv_poll_cq %d", r);
		got += r;
		if (got < n)
			usleep(1000);
	}
	CHECK(got == n, "expected %d completions, got %d", n, got);
	r = ibv_poll_cq(cq, 1, wc + n);
	CHECK(r == 0, "an extra completion appeared (wr_id %llu status %d)",
	      (unsigned long long)wc[n].wr_id, wc[n].status);
}

static void test_mr(void)
{
	struct ibv_mr *m;
	uint32_t old;

	errno = 0;
	m = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	CHECK(!m && errno == EINVAL, "REMOTE_WRITE without LOCAL_WRITE accepted");
	m = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(!m && errno == EINVAL, "REMOTE_ATOMIC without LOCAL_WRITE accepted");
	/* memory windows: tests/progs/verbs_mw.c */
	m = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_MW_BIND | IBV_ACCESS_LOCAL_WRITE);
	CHECK(m, "MW_BIND refused: %s", strerror(errno));
	CHECK(!ibv_dereg_mr(m), "dereg MW_BIND MR");
	m = ibv_reg_mr(pd, (void *)0x1000, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!m, "unmapped memory registered");

	m = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	CHECK(m, "reg_mr");
	CHECK(m->lkey == m->rkey && m->lkey >> 8, "key layout %#x/%#x", m->lkey, m->rkey);
	old = m->lkey;
	CHECK(!ibv_dereg_mr(m), "dereg_mr");
	m = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	CHECK(m, "re-reg_mr");
	CHECK(m->lkey != old && (m->lkey & 0xff) != (old & 0xff),
	      "key byte did not change on re-registration: %#x -> %#x", old, m->lkey);
	CHECK(!ibv_dereg_mr(m), "dereg_mr");
	printf("ok mr: access checks, key %#x -> new key on re-registration\n", old);
}

/*
 * The key byte of consecutive MRs is no predictable sequence: a counter
 * (+1 each time) or a constant would let a peer holding one rkey guess the
 * next. Over 64 registrations a random byte repeats the previous step or
 * equals the previous byte + 1 a handful of times at most (expected 0.25
 * each); never the previous byte itself (rxe's rule, ours too).
 */
static void test_mr_keys(void)
{
	enum { N = 64 };
	struct ibv_mr *m[N];
	unsigned int succ = 0, same_step = 0, i;
	uint8_t b[N];

	for (i = 0; i < N; i++) {
		m[i] = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_READ);
		CHECK(m[i], "reg_mr %u", i);
		b[i] = m[i]->rkey & 0xff;
	}
	for (i = 1; i < N; i++) {
		CHECK(b[i] != b[i - 1], "key byte repeated: %#x", b[i]);
		succ += b[i] == (uint8_t)(b[i - 1] + 1);
		same_step += i > 1 && (uint8_t)(b[i] - b[i - 1]) ==
					(uint8_t)(b[i - 1] - b[i - 2]);
	}
	for (i = 0; i < N; i++)
		CHECK(!ibv_dereg_mr(m[i]), "dereg_mr %u", i);
	CHECK(succ < 8 && same_step < 8,
	      "key bytes of %d consecutive MRs are a sequence (%u times +1, %u times the same step; %#x %#x %#x %#x ...)",
	      N, succ, same_step, b[0], b[1], b[2], b[3]);
	printf("ok mr keys: %d consecutive key bytes, %u times +1, %u times the same step\n",
	       N, succ, same_step);
}

static void test_state_machine(struct ibv_cq *cq)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, cq, cq, NULL, 0);
	struct ibv_qp_attr a = rtr_attr(), q;
	struct ibv_qp_init_attr qi;

	CHECK(ibv_modify_qp(qp, &a, RTR_MASK) == EINVAL, "RESET->RTR accepted");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL,
	      "RESET->INIT without required attributes accepted");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 2;
	a.qp_access_flags = 0;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS) == EINVAL, "port 2 accepted");
	CHECK(post_send(qp, 1, 1, 0) == EINVAL, "post_send in RESET accepted");
	CHECK(post_recv(qp, 1, 1) == EINVAL, "post_recv in RESET accepted");
	CHECK(!to_init(qp), "RESET->INIT");
	CHECK(post_send(qp, 1, 1, 0) == EINVAL, "post_send in INIT accepted");
	CHECK(!post_recv(qp, 1, 1), "post_recv in INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, RTS_MASK) == EINVAL, "INIT->RTS accepted");
	a = rtr_attr();
	a.max_dest_rd_atomic = 200;
	CHECK(ibv_modify_qp(qp, &a, RTR_MASK) == EINVAL, "max_dest_rd_atomic 200 accepted");
	a = rtr_attr();
	a.ah_attr.grh.sgid_index = 200;
	CHECK(ibv_modify_qp(qp, &a, RTR_MASK), "sgid_index 200 accepted");
	a = rtr_attr();
	CHECK(ibv_modify_qp(qp, &a, RTR_MASK & ~IBV_QP_DEST_QPN) == EINVAL,
	      "INIT->RTR without DEST_QPN accepted");
	CHECK(!ibv_modify_qp(qp, &a, RTR_MASK), "INIT->RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14; a.retry_cnt = 8; a.rnr_retry = 7; a.sq_psn = 0x777; a.max_rd_atomic = 1;
	CHECK(ibv_modify_qp(qp, &a, RTS_MASK) == EINVAL, "retry_cnt 8 accepted");
	a.retry_cnt = 7;
	CHECK(!ibv_modify_qp(qp, &a, RTS_MASK), "RTR->RTS");
	a.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RTS->INIT accepted");
	a.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "RTS->RTR accepted");

	CHECK(!ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
			    IBV_QP_DEST_QPN | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
			    IBV_QP_AV | IBV_QP_CAP, &qi), "query_qp");
	CHECK(q.qp_state == IBV_QPS_RTS, "query: state %d", q.qp_state);
	CHECK(q.sq_psn == 0x777 && q.rq_psn == 0x4242 && q.dest_qp_num == 0x123 &&
	      q.path_mtu == IBV_MTU_1024 && q.timeout == 14,
	      "query: attributes sq_psn %#x rq_psn %#x dqpn %#x mtu %d timeout %d",
	      q.sq_psn, q.rq_psn, q.dest_qp_num, q.path_mtu, q.timeout);
	CHECK(q.ah_attr.is_global &&
	      !memcmp(&q.ah_attr.grh.dgid, &loop_gid, sizeof(loop_gid)) &&
	      q.ah_attr.grh.sgid_index == loop_gid_index, "query: dgid/sgid_index");
	CHECK(qi.qp_type == IBV_QPT_RC && qi.cap.max_send_wr >= 16, "query: init attr");

	/* RESET from RTS drops every WQE without a completion */
	CHECK(!post_send(qp, 5, 1, IBV_SEND_SIGNALED), "post_send in RTS");
	a.qp_state = IBV_QPS_RESET;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "RTS->RESET");
	CHECK(!to_rts(qp), "RESET->...->RTS again");
	CHECK(!to_err(qp), "RTS->ERR");
	{
		struct ibv_wc wc[4];

		CHECK(ibv_poll_cq(cq, 4, wc) == 0, "RESET left completions behind");
	}
	a.qp_state = IBV_QPS_RESET;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "ERR->RESET");
	CHECK(!ibv_destroy_qp(qp), "destroy_qp");
	printf("ok state machine: transitions, attribute validation, query_qp, RESET\n");
}

static void test_flush(struct ibv_cq *cq)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, cq, cq, NULL, 0);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc[32];
	struct ibv_send_wr swr, *bad;
	struct ibv_sge sge[2];
	int i, s = 0, r = 0;

	CHECK(!to_rts(qp), "to RTS");
	for (i = 0; i < 5; i++)
		CHECK(!post_recv(qp, 100 + i, 1 + i % 2), "post_recv %d", i);
	CHECK(post_recv(qp, 999, 3) == EINVAL, "recv with 3 SGEs (max 2) accepted");
	CHECK(!post_send(qp, 200, 1, IBV_SEND_SIGNALED), "send 200");
	CHECK(!post_send(qp, 201, 2, 0), "send 201 (unsignaled, 2 SGEs)");
	CHECK(!post_send(qp, 202, 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED), "send 202 inline");
	/* a SGE list longer than the QP's max_send_sge */
	CHECK(!ibv_query_qp(qp, &qa, IBV_QP_CAP, &qi), "query cap");
	CHECK(qi.cap.max_send_sge >= 2 && qi.cap.max_send_sge < 16, "max_send_sge %u",
	      qi.cap.max_send_sge);
	CHECK(post_send(qp, 299, qi.cap.max_send_sge + 1, IBV_SEND_SIGNALED) == EINVAL,
	      "send with %u SGEs (max %u) accepted", qi.cap.max_send_sge + 1,
	      qi.cap.max_send_sge);
	/* inline larger than max_inline_data */
	memset(&swr, 0, sizeof(swr));
	sge[0] = (struct ibv_sge){ (uintptr_t)buf, qi.cap.max_inline_data + 1, mr->lkey };
	swr.wr_id = 298; swr.sg_list = sge; swr.num_sge = 1; swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_INLINE;
	CHECK(ibv_post_send(qp, &swr, &bad) == EINVAL && bad == &swr,
	      "inline of %u bytes accepted", qi.cap.max_inline_data + 1);
	/* a WRITE with its remote address */
	swr.wr_id = 203; swr.opcode = IBV_WR_RDMA_WRITE; swr.send_flags = IBV_SEND_SIGNALED;
	sge[0].length = 128;
	swr.wr.rdma.remote_addr = 0x1000; swr.wr.rdma.rkey = 0x1234;
	CHECK(!ibv_post_send(qp, &swr, &bad), "write 203");

	CHECK(ibv_poll_cq(cq, 32, wc) == 0, "completions before ERROR (no rail)");
	CHECK(!to_err(qp), "RTS->ERR");
	poll_n(cq, wc, 9);
	for (i = 0; i < 9; i++) {
		CHECK(wc[i].status == IBV_WC_WR_FLUSH_ERR, "wc %d status %d", i, wc[i].status);
		CHECK(wc[i].qp_num == qp->qp_num, "wc %d qp_num", i);
		if (wc[i].wr_id >= 200) {
			CHECK(wc[i].wr_id == 200u + s, "send flush order: %llu, want %d",
			      (unsigned long long)wc[i].wr_id, 200 + s);
			CHECK(wc[i].opcode == (s == 3 ? IBV_WC_RDMA_WRITE : IBV_WC_SEND),
			      "send %d opcode %d", s, wc[i].opcode);
			s++;
		} else {
			CHECK(wc[i].wr_id == 100u + r, "recv flush order: %llu, want %d",
			      (unsigned long long)wc[i].wr_id, 100 + r);
			CHECK(wc[i].opcode == IBV_WC_RECV, "recv opcode %d", wc[i].opcode);
			r++;
		}
	}
	CHECK(s == 4 && r == 5, "sends %d recvs %d", s, r);

	/* WRs posted in ERROR complete with a flush error too */
	CHECK(!post_recv(qp, 110, 1), "post_recv in ERR");
	CHECK(!post_send(qp, 210, 1, 0), "post_send in ERR");
	poll_n(cq, wc, 2);
	for (i = 0; i < 2; i++)
		CHECK(wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		      (wc[i].wr_id == 110 || wc[i].wr_id == 210),
		      "ERR-state post: wr_id %llu status %d",
		      (unsigned long long)wc[i].wr_id, wc[i].status);
	CHECK(!ibv_destroy_qp(qp), "destroy_qp");
	printf("ok flush: 4 sends + 5 recvs flushed in order, ERR-state posts flushed\n");
}

static void test_resize_and_events(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *ecq;
	struct ibv_qp *qp;
	struct ibv_wc wc[64];
	struct pollfd pfd;
	void *cq_ctx;
	int i;

	CHECK(ch, "create_comp_channel");
	cq = ibv_create_cq(ctx, 8, NULL, ch, 0);
	CHECK(cq && cq->cqe >= 8, "create_cq 8");
	qp = make_qp(IBV_QPT_RC, cq, cq, NULL, 0);
	CHECK(!to_init(qp), "to INIT");
	for (i = 0; i < 6; i++)
		CHECK(!post_recv(qp, 300 + i, 1), "post_recv");

	CHECK(!ibv_req_notify_cq(cq, 0), "req_notify_cq");
	CHECK(!to_err(qp), "INIT->ERR");
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	CHECK(poll(&pfd, 1, 2000) == 1, "no completion event after arming");
	CHECK(!ibv_get_cq_event(ch, &ecq, &cq_ctx) && ecq == cq, "get_cq_event");
	ibv_ack_cq_events(cq, 1);

	poll_some(cq, wc, 2);	/* consume 2 of 6 */
	CHECK(wc[0].wr_id == 300 && wc[1].wr_id == 301, "first two");
	CHECK(ibv_resize_cq(cq, 2) != 0, "resize below the 4 pending CQEs accepted");
	CHECK(!ibv_resize_cq(cq, 64), "resize_cq 64");
	CHECK(cq->cqe >= 64, "cqe after resize %d", cq->cqe);
	poll_n(cq, wc, 4);
	for (i = 0; i < 4; i++)
		CHECK(wc[i].wr_id == 302u + i && wc[i].status == IBV_WC_WR_FLUSH_ERR,
		      "after resize: wc %d wr_id %llu", i, (unsigned long long)wc[i].wr_id);

	/* no event when not armed */
	CHECK(!post_recv(qp, 320, 1), "post_recv in ERR");
	poll_n(cq, wc, 1);
	CHECK(poll(&pfd, 1, 200) == 0, "event without arming");
	CHECK(!ibv_destroy_qp(qp), "destroy_qp");
	CHECK(!ibv_destroy_cq(cq), "destroy_cq");
	CHECK(!ibv_destroy_comp_channel(ch), "destroy channel");
	printf("ok resize_cq keeps pending CQEs in order; completion channel event when armed\n");
}

static void test_overflow(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_async_event ev;
	struct ibv_qp *qp;
	struct pollfd pfd;
	int i;

	CHECK(cq && cq->cqe == 4, "create_cq 4 (cqe %d)", cq ? cq->cqe : -1);
	qp = make_qp(IBV_QPT_RC, cq, cq, NULL, 0);
	CHECK(!to_init(qp), "to INIT");
	for (i = 0; i < 8; i++)
		CHECK(!post_recv(qp, 400 + i, 1), "post_recv");
	CHECK(!to_err(qp), "INIT->ERR (8 flushes into a 4-entry CQ)");
	pfd = (struct pollfd){ .fd = ctx->async_fd, .events = POLLIN };
	CHECK(poll(&pfd, 1, 2000) == 1, "no async event after CQ overflow");
	CHECK(!ibv_get_async_event(ctx, &ev), "get_async_event");
	CHECK(ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq,
	      "async event %d, want CQ_ERR", ev.event_type);
	ibv_ack_async_event(&ev);
	CHECK(!ibv_destroy_qp(qp), "destroy_qp");
	CHECK(!ibv_destroy_cq(cq), "destroy_cq");
	printf("ok CQ overflow -> IBV_EVENT_CQ_ERR\n");
}

static void test_srq(struct ibv_cq *cq)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 2 } };
	struct ibv_srq_attr sa;
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge[3];
	struct ibv_qp *qp;
	int i;

	CHECK(srq, "create_srq");
	for (i = 0; i < 3; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf, 64, mr->lkey };
	for (i = 0; i < 4; i++) {
		wr = (struct ibv_recv_wr){ .wr_id = 500 + i, .sg_list = sge, .num_sge = 2 };
		CHECK(!ibv_post_srq_recv(srq, &wr, &bad), "post_srq_recv");
	}
	wr.num_sge = 3;
	CHECK(ibv_post_srq_recv(srq, &wr, &bad) == EINVAL && bad == &wr,
	      "srq recv with 3 SGEs (max 2) accepted");
	CHECK(!ibv_query_srq(srq, &sa) && sa.max_wr >= 16 && sa.max_sge == 2 &&
	      sa.srq_limit == 0, "query_srq: max_wr %u max_sge %u limit %u",
	      sa.max_wr, sa.max_sge, sa.srq_limit);
	sa.srq_limit = 2;
	CHECK(!ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "arm srq limit");
	CHECK(!ibv_query_srq(srq, &sa) && sa.srq_limit == 2, "limit %u", sa.srq_limit);
	sa.srq_limit = 100000;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == EINVAL, "limit > max_wr accepted");
	sa.max_wr = 64;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR) != 0, "SRQ resize accepted");

	qp = make_qp(IBV_QPT_RC, cq, cq, srq, 0);
	CHECK(!to_rts(qp), "SRQ QP to RTS");
	CHECK(post_recv(qp, 1, 1) != 0, "post_recv on a QP with an SRQ accepted");
	CHECK(!to_err(qp), "SRQ QP to ERR");
	{
		struct ibv_wc wc[8];

		usleep(10000);
		CHECK(ibv_poll_cq(cq, 8, wc) == 0, "SRQ WQEs were flushed by a QP error");
	}
	CHECK(ibv_destroy_srq(srq) == EBUSY, "destroy of an SRQ in use accepted");
	CHECK(!ibv_destroy_qp(qp), "destroy_qp");
	CHECK(!ibv_destroy_srq(srq), "destroy_srq");
	printf("ok srq: post, limits, query, attach to a QP, not flushed by QP error\n");
}

static void test_uc(struct ibv_cq *cq)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UC, cq, cq, NULL, 1);
	struct ibv_send_wr wr = { .wr_id = 600, .opcode = IBV_WR_RDMA_READ }, *bad;
	struct ibv_wc wc[4];

	CHECK(!to_rts(qp), "UC to RTS");
	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL, "RDMA READ on UC accepted");
	/* UC has no ACK: a send leaves (here to a peer no link leads to, so it is dropped, as on a
	 * wire with nobody at the other end) and completes with success */
	CHECK(!post_send(qp, 601, 1, 0), "UC send (sq_sig_all)");
	poll_n(cq, wc, 1);
	CHECK(wc[0].wr_id == 601 && wc[0].status == IBV_WC_SUCCESS, "UC send: status %d",
	      wc[0].status);
	CHECK(!to_err(qp), "UC to ERR");
	CHECK(!post_send(qp, 602, 1, 0), "UC send in ERR");
	poll_n(cq, wc, 1);
	CHECK(wc[0].wr_id == 602 && wc[0].status == IBV_WC_WR_FLUSH_ERR, "UC flush: status %d",
	      wc[0].status);
	CHECK(!ibv_destroy_qp(qp), "destroy UC qp");
	printf("ok uc: RTS without RC attributes, READ rejected, flush\n");
}

static void mode_objects(void)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_cq *cq;

	open_dev();
	CHECK(!ibv_query_device(ctx, &da), "query_device");
	CHECK(da.max_qp >= 1024 && da.max_sge == 8 && da.max_cqe >= 4096,
	      "device attributes");
	/* fast registration for kernel ULPs (nvme-rdma refuses a device without) */
	CHECK(da.device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS,
	      "MEM_MGT_EXTENSIONS not claimed");
	CHECK(!ibv_query_port(ctx, 1, &pa) && pa.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "query_port");
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(cq, "create_cq");
	CHECK(!ibv_create_cq(ctx, 1 << 20, NULL, NULL, 0), "cqe 2^20 accepted");
	test_mr();
	test_mr_keys();
	test_state_machine(cq);
	test_flush(cq);
	test_resize_and_events();
	test_overflow();
	test_srq(cq);
	test_uc(cq);
	CHECK(!ibv_destroy_cq(cq), "destroy_cq");
	CHECK(!ibv_dereg_mr(mr), "dereg_mr");
	CHECK(!ibv_dealloc_pd(pd), "dealloc_pd");
	CHECK(!ibv_close_device(ctx), "close_device");
	printf("verbs_objects: all ok\n");
}

static void mode_nosyscall(long n)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	long i;
	int r;

	open_dev();
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(cq, "create_cq");
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16384,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		qp = ibv_create_qp(pd, &ia);
		CHECK(qp, "create_qp");
		CHECK((long)ia.cap.max_recv_wr >= n, "RQ of %u < %ld", ia.cap.max_recv_wr, n);
	}
	CHECK(!to_rts(qp), "to RTS");
	CHECK(!ibv_req_notify_cq(cq, 0), "warm up req_notify_cq");
	syscall(SYS_getppid);	/* marker: loop begins */
	for (i = 0; i < n; i++) {
		r = ibv_poll_cq(cq, 4, wc);
		if (r != 0)
			break;
		if (post_recv(qp, i, 1))
			break;
		if (ibv_req_notify_cq(cq, i & 1))
			break;
	}
	syscall(SYS_getppid);	/* marker: loop ends */
	CHECK(i == n, "loop stopped at %ld", i);
	/* no rail polls the SQ: NEED_DOORBELL is set, post_send rings once */
	syscall(SYS_getppid);
	CHECK(!post_send(qp, 1, 1, IBV_SEND_SIGNALED), "post_send");
	syscall(SYS_getppid);
	CHECK(!ibv_destroy_qp(qp), "destroy_qp");
	CHECK(!ibv_destroy_cq(cq), "destroy_cq");
	printf("nosyscall: %ld x (poll_cq + post_recv + req_notify_cq) done\n", n);
}

static void mode_hold(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_cq *cq;
	struct ibv_qp *qp, *qp2;
	struct ibv_srq *srq;
	struct ibv_wc wc[4];

	open_dev();
	cq = ibv_create_cq(ctx, 64, ibv_create_comp_channel(ctx), NULL, 0);
	CHECK(cq, "create_cq");
	srq = ibv_create_srq(pd, &sia);
	CHECK(srq, "create_srq");
	qp = make_qp(IBV_QPT_RC, cq, cq, NULL, 0);
	qp2 = make_qp(IBV_QPT_RC, cq, cq, srq, 0);
	CHECK(!to_rts(qp) && !to_init(qp2), "modify");
	CHECK(!post_recv(qp, 1, 1) && !post_send(qp, 2, 1, IBV_SEND_SIGNALED), "post");
	printf("ready\n");
	fflush(stdout);
	for (;;) {	/* keeps touching the mmap'd CQ, also after disassociation */
		ibv_poll_cq(cq, 4, wc);
		usleep(10000);
	}
}

/* tbrdma0's context, PD, MR and a CQ: 3 rdma cgroup objects (hca_object) */
static struct ibv_cq *open_min(void)
{
	struct ibv_cq *cq;

	open_pd_mr(IBV_ACCESS_LOCAL_WRITE);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(cq, "create_cq");
	return cq;
}

static struct ibv_qp *try_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static void mode_rdmacg(long max)
{
	struct ibv_qp *qp[1024];
	struct ibv_cq *cq;
	struct ibv_mr *mr2;
	long n = 0;
	char c;

	CHECK(max >= 4 && max - 3 <= 1024, "N out of 4..1027");
	cq = open_min();
	while (n < 1024 && (qp[n] = try_qp(cq)))
		n++;
	CHECK(n == max - 3, "%ld QPs after 3 objects, the limit is %ld objects", n, max);
	CHECK(errno == EAGAIN, "QP %ld (object %ld) failed, but not with EAGAIN",
	      n + 1, max + 1);
	mr2 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2 && errno == EAGAIN, "an MR past the limit: %p", (void *)mr2);
	CHECK(!ibv_destroy_qp(qp[--n]), "destroy_qp");
	mr2 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr2, "an MR in the room of a destroyed QP");
	printf("rdmacg: %ld objects (PD, 2 MRs, CQ, %ld QPs), object %ld refused with EAGAIN\n",
	       max, n, max + 1);
	printf("ready\n");
	while (read(0, &c, 1) > 0)
		;
	CHECK(!ibv_dereg_mr(mr2), "dereg_mr");
	while (n > 0)
		CHECK(!ibv_destroy_qp(qp[--n]), "destroy_qp");
}

static void mode_qps(long want)
{
	struct ibv_cq *cq = open_min();
	struct ibv_qp *qp;
	long n;

	find_loop_gid();
	for (n = 0; n < want; n++) {
		qp = make_qp(IBV_QPT_RC, cq, cq, NULL, 0);
		CHECK(!to_rts(qp), "QP %ld to RTS", n + 1);
	}
	printf("qps: %ld RC QPs\n", want);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "objects"))
		mode_objects();
	else if (argc >= 3 && !strcmp(argv[1], "nosyscall"))
		mode_nosyscall(atol(argv[2]));
	else if (argc >= 2 && !strcmp(argv[1], "hold"))
		mode_hold();
	else if (argc >= 3 && !strcmp(argv[1], "rdmacg"))
		mode_rdmacg(atol(argv[2]));
	else if (argc >= 3 && !strcmp(argv[1], "qps"))
		mode_qps(atol(argv[2]));
	else {
		fprintf(stderr, "usage: verbs_objects objects|nosyscall N|hold|rdmacg N|qps N\n");
		return 2;
	}
	return 0;
}
