// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * core_bench: the OS-independent transport core at native speed.
 *
 * Two threads, one per end: the requester thread owns QP A and posts RDMA
 * WRITEs; the responder thread owns QP B and places them into its memory
 * region. Frames A->B travel over N lock-free single-producer/single-
 * consumer rings (the rails), acknowledgements B->A over one ring. Every byte
 * is copied twice, as on the real wire: into a frame (sgl_read) and out of it
 * into the target region (mr_write). The same run measures single-core
 * memcpy bandwidth over the same buffer sizes, so the ratio is taken on one
 * machine in one run.
 *
 * Output (CSV on stdout):
 *   rails,size,core_gbps,msgs_per_s,memcpy_gbps,ratio,cpu_util,gbps_per_cpu,memcpy_gbps_per_cpu,
 *   ratio_per_cpu,retransmits,timeouts,pipe_gbps_per_cpu,ratio_pipe_per_cpu
 * core_gbps is payload moved per wall-clock second, ratio = core_gbps / memcpy_gbps (single-core
 * memcpy of the same size, per wall-clock second). cpu_util is the process CPU time over wall time
 * (1.0 = one core busy; the ends spin and yield, so idle polling counts), gbps_per_cpu the payload
 * per CPU-second, memcpy_gbps_per_cpu memcpy's bytes per CPU-second of its thread, ratio_per_cpu
 * their quotient: CPU-time based, so other load on the machine distorts it much less.
 * retransmits, timeouts: the requester's counters for the point (the in-memory wire loses
 * nothing; these come from an end starved of the CPU). CORE_BENCH_RTO_MS sets the retransmit
 * timeout (default: the core's, about 67 ms). pipe_gbps_per_cpu: the same data movement with no
 * transport (the two-copy pipeline: one thread copies the message, a frame at a time, into the
 * point's rings, the other copies it out into the target region), payload per CPU-second of the
 * two threads; ratio_pipe_per_cpu = gbps_per_cpu / pipe_gbps_per_cpu, the share of that ceiling
 * the transport reaches. memcpy's 0.5 assumes both copies run at one core's memcpy speed; when
 * the bytes cross from one core's cache to the other's they run at the pipeline's.
 * Usage: core_bench [-r RAILS,...] [-s SIZE,...] [-t SECONDS_PER_POINT] [-c] [-1] [-n MSGS] [-u]
 *   -c verifies the destination bytes after each point (slower; for tests).
 *   -1 one thread drives both ends in turn (deterministic; for valgrind --tool=callgrind).
 *   -n a fixed workload of MSGS messages per point instead of -t; memcpy is not measured.
 *   -u posts one WR at a time; by default the WRs that fit the send queue at once are posted
 *      as a chain (TBR_WR_MORE on all but the last), as ibv_post_send() with a WR list.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tbr_core.h"

#define RING_SLOTS	256		/* frames per rail ring */
#define MAX_RAILS	8
#define REGION_MAX	(64u << 20)	/* source and target buffers */
#define RKEY		0x5151u
#define LKEY		0x1000u

struct slot {
	uint32_t len;
	uint8_t data[TBR_FRAME_MAX];
};

struct ring {
	_Alignas(64) _Atomic uint32_t head;	/* producer */
	_Alignas(64) _Atomic uint32_t tail;	/* consumer */
	_Alignas(64) struct slot *slots;
	uint32_t tail_seen;			/* producer's last read of tail */
};

struct end {
	struct tbr_tqp *qp;
	struct ring *out[MAX_RAILS];	/* rings this end transmits on */
	unsigned int nout, next;
	struct ring *in[MAX_RAILS];
	unsigned int nin;
	struct slot *pending;		/* tx_alloc'd, not yet sent */
	struct ring *pending_ring;
	uint8_t *mem;
	uint64_t completed, completed_bytes, errors;
};

static struct end ends[2];
static _Atomic int stop;
static int single;		/* -1: one thread, both ends */
static uint64_t fixed_msgs;	/* -n */
static int chain = 1;		/* -u clears it: one WR per post */
/* buffer size: REGION_MAX, 16 MiB with -n (less to initialise under valgrind) */
static unsigned int REGION = REGION_MAX;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static int ring_init(struct ring *r)
{
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	r->tail_seen = 0;
	r->slots = aligned_alloc(64, sizeof(struct slot) * RING_SLOTS);
	return r->slots ? 0 : -ENOMEM;
}

/* ops: requester memory is plain addresses; keys are checked for shape only */
static int op_sgl_read(void *ctx, const struct tbr_sge *sgl, uint32_t nsge,
		       uint64_t off, void *dst, uint32_t len)
{
	memcpy(dst, (const uint8_t *)(uintptr_t)sgl[0].addr + off, len);
	return 0;
}

static int op_sgl_write(void *ctx, const struct tbr_sge *sgl, uint32_t nsge,
			uint64_t off, const void *src, uint32_t len)
{
	memcpy((uint8_t *)(uintptr_t)sgl[0].addr + off, src, len);
	return 0;
}

static int op_mr_write(void *ctx, uint32_t rkey, uint64_t va, const void *src,
		       uint32_t len)
{
	struct end *e = ctx;

	if (rkey != RKEY || va + len > REGION)
		return -TBR_WC_REM_ACCESS_ERR;
	memcpy(e->mem + va, src, len);
	return 0;
}

static int op_mr_read(void *ctx, uint32_t rkey, uint64_t va, void *dst,
		      uint32_t len)
{
	struct end *e = ctx;

	if (rkey != RKEY || va + len > REGION)
		return -TBR_WC_REM_ACCESS_ERR;
	memcpy(dst, e->mem + va, len);
	return 0;
}

static int op_mr_check(void *ctx, uint32_t rkey, uint64_t va, uint32_t len,
		       uint32_t access)
{
	return rkey == RKEY && va + len <= REGION ? 0 : -TBR_WC_REM_ACCESS_ERR;
}

static int op_mr_atomic(void *ctx, uint32_t rkey, uint64_t va,
			enum tbr_atomic_op op, uint64_t ca, uint64_t swap,
			uint64_t *orig)
{
	return -TBR_WC_REM_ACCESS_ERR;
}

static int op_get_recv(void *ctx, struct tbr_tqp_recv *wqe)
{
	return -ENOENT;
}

static void op_complete(void *ctx, const struct tbr_cqe *cqe)
{
	struct end *e = ctx;

	if (cqe->status != TBR_WC_SUCCESS)
		e->errors++;
	e->completed++;
	e->completed_bytes += cqe->byte_len;
}

static void *op_tx_alloc(void *ctx, uint32_t len)
{
	struct end *e = ctx;
	unsigned int i;

	for (i = 0; i < e->nout; i++) {
		struct ring *r = e->out[(e->next + i) % e->nout];
		uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

		/*
		 * Read the consumer's index only when the last value read says
		 * full: it is on a cache line the other core writes.
		 */
		if (head - r->tail_seen >= RING_SLOTS)
			r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (head - r->tail_seen < RING_SLOTS) {
			e->next = (e->next + i + 1) % e->nout;
			e->pending = &r->slots[head % RING_SLOTS];
			e->pending_ring = r;
			return e->pending->data;
		}
	}
	return NULL;
}

static void op_tx_send(void *ctx, void *frame, uint32_t len)
{
	struct end *e = ctx;
	struct ring *r = e->pending_ring;

	e->pending->len = len;
	atomic_store_explicit(&r->head, atomic_load_explicit(&r->head, memory_order_relaxed) + 1,
			      memory_order_release);
}

static void op_tx_abort(void *ctx, void *frame)
{
}

static void op_qp_error(void *ctx, uint32_t status)
{
	((struct end *)ctx)->errors++;
}

static const struct tbr_ops ops = {
	.sgl_read = op_sgl_read, .sgl_write = op_sgl_write,
	.mr_write = op_mr_write, .mr_read = op_mr_read, .mr_check = op_mr_check,
	.mr_atomic = op_mr_atomic, .get_recv = op_get_recv, .complete = op_complete,
	.tx_alloc = op_tx_alloc, .tx_send = op_tx_send, .tx_abort = op_tx_abort,
	.qp_error = op_qp_error,
};

/* Feed every frame waiting on @e's input rings into its QP. */
static bool drain(struct end *e)
{
	bool any = false;
	unsigned int i;

	for (i = 0; i < e->nin; i++) {
		struct ring *r = e->in[i];
		uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		uint64_t t;

		if (tail == head)
			continue;
		/* one timestamp per batch, as a NAPI-style poll loop would */
		t = now_ns();
		while (tail != head) {
			struct slot *s = &r->slots[tail % RING_SLOTS];

			tbr_tqp_rx(e->qp, s->data, s->len, t);
			tail++;
			/* slots back to the producer every 16 frames, not each */
			if (!(tail % 16))
				atomic_store_explicit(&r->tail, tail, memory_order_release);
			any = true;
		}
		atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
	return any;
}

struct point {
	unsigned int size;
	uint64_t posted;
};

static void *responder(void *arg)
{
	struct end *e = &ends[1];

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		bool any = drain(e);
		uint64_t t = now_ns();

		if (!any || tbr_tqp_next_deadline(e->qp) <= t)
			tbr_tqp_progress(e->qp, t);
		/*
		 * Nothing arrived: give the CPU away. On a machine with fewer
		 * free cores than threads a spinning end would otherwise
		 * starve the other one and measure the scheduler.
		 */
		if (!any)
			sched_yield();
	}
	return NULL;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the responder's share of one loop turn, in the single-threaded mode */
static bool responder_turn(uint64_t t)
{
	struct end *b = &ends[1];
	bool any = drain(b);

	if (!any || tbr_tqp_next_deadline(b->qp) <= t)
		tbr_tqp_progress(b->qp, t);
	return any;
}

/*
 * Run one point: WRITEs of @size for @secs (or fixed_msgs of them); returns bytes/s and sets
 * *msgs (completed) and *wall (seconds).
 */
static __attribute__((noinline)) double run_point(unsigned int size, double secs, uint64_t *msgs,
						  double *wall)
{
	struct end *e = &ends[0];
	uint64_t t0, deadline, off = 0, start_bytes, start_msgs, posted_total = 0;
	struct tbr_sge sge = { .length = size, .lkey = LKEY };
	struct tbr_send_wr wr = {
		.opcode = TBR_WR_WRITE, .sgl = &sge, .num_sge = 1, .rkey = RKEY,
	};
	uint32_t room;

	t0 = now_ns();
	deadline = t0 + (uint64_t)(secs * 1e9);
	start_bytes = e->completed_bytes;
	start_msgs = e->completed;
	for (;;) {
		uint64_t t = now_ns();
		bool posted = false, any;

		if (fixed_msgs ? posted_total >= fixed_msgs : t >= deadline)
			break;
		/* post what the send queue takes, as one chain unless -u */
		room = tbr_tqp_sq_space(e->qp);
		if (fixed_msgs && room > fixed_msgs - posted_total)
			room = (uint32_t)(fixed_msgs - posted_total);
		while (room) {
			room--;
			sge.addr = (uintptr_t)(e->mem + off);
			wr.wr_id = off;
			wr.remote_addr = off;
			wr.flags = chain && room ? TBR_WR_SIGNALED | TBR_WR_MORE :
				   TBR_WR_SIGNALED;
			if (tbr_tqp_post_send(e->qp, &wr, t))
				break;
			posted = true;
			posted_total++;
			off = (off + size) % (REGION - size + 1);
			off -= off % 64;
		}
		if (single && responder_turn(t))
			posted = true;
		any = drain(e);
		if (!any || tbr_tqp_next_deadline(e->qp) <= t)
			tbr_tqp_progress(e->qp, t);
		if (!any && !posted && !single)
			sched_yield();
	}
	/* let the queue run dry so the next point starts clean */
	while (tbr_tqp_sq_space(e->qp) < 256 && !e->errors) {
		uint64_t t = now_ns();

		if (single)
			responder_turn(t);
		drain(e);
		tbr_tqp_progress(e->qp, t);
	}
	*msgs = e->completed - start_msgs;
	*wall = (now_ns() - t0) / 1e9;
	return (double)(e->completed_bytes - start_bytes) / *wall;
}

/* single-core memcpy: bytes per wall-clock second; *per_cpu: bytes per CPU-second of this thread */
static double memcpy_rate(unsigned int size, double secs, double *per_cpu)
{
	uint8_t *a = ends[0].mem, *b = ends[1].mem;
	uint64_t t0 = now_ns(), bytes = 0, off = 0;
	uint64_t end = t0 + (uint64_t)(secs * 1e9);
	double c0 = thread_cpu_seconds();

	while (now_ns() < end) {
		for (int i = 0; i < 64; i++) {
			memcpy(b + off, a + off, size);
			bytes += size;
			off = (off + size) % (REGION - size + 1);
			off -= off % 64;
		}
	}
	*per_cpu = bytes / (thread_cpu_seconds() - c0);
	return bytes / ((now_ns() - t0) / 1e9);
}

static struct ring data[MAX_RAILS], ack;	/* setup(): the rails A->B, ACKs B->A */

/*
 * The two-copy pipeline alone (pipe_gbps_per_cpu): the point's data movement without the
 * transport. The producer copies each message of @size from A's region into the rails' slots,
 * at most TBR_MTU_MAX bytes a slot, round robin over the rails; the consumer drains the rings in
 * drain()'s order and copies each slot into B's region. Both yield when they can do nothing, as
 * the ends do.
 */
struct pipe {
	unsigned int rails;
	uint64_t bytes;
	double cpu;
};

static void *pipe_consumer(void *arg)
{
	struct pipe *p = arg;
	double c0 = thread_cpu_seconds();
	uint64_t off = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		bool any = false;

		for (unsigned int i = 0; i < p->rails; i++) {
			struct ring *r = &data[i];
			uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
			uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);

			while (tail != head) {
				struct slot *sl = &r->slots[tail % RING_SLOTS];

				if (off + sl->len > REGION)
					off = 0;
				memcpy(ends[1].mem + off, sl->data, sl->len);
				off += sl->len;
				p->bytes += sl->len;
				tail++;
				any = true;
			}
			atomic_store_explicit(&r->tail, tail, memory_order_release);
		}
		if (!any)
			sched_yield();
	}
	p->cpu = thread_cpu_seconds() - c0;
	return NULL;
}

/* Payload bytes per CPU-second of the two threads (0 when a thread could not start). */
static double pipe_rate(unsigned int size, unsigned int rails, double secs)
{
	struct pipe p = { .rails = rails };
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9), moff = 0;
	unsigned int next = 0;
	double c0, cpu;
	pthread_t th;

	for (unsigned int i = 0; i < rails; i++) {
		atomic_store(&data[i].head, 0);
		atomic_store(&data[i].tail, 0);
	}
	atomic_store(&stop, 0);
	if (pthread_create(&th, NULL, pipe_consumer, &p))
		return 0;
	c0 = thread_cpu_seconds();
	while (now_ns() < end) {
		for (uint32_t off = 0; off < size;) {
			uint32_t len = size - off < TBR_MTU_MAX ? size - off : TBR_MTU_MAX;
			struct ring *r = &data[next];
			uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

			if (head - atomic_load_explicit(&r->tail, memory_order_acquire) >= RING_SLOTS) {
				sched_yield();
				continue;
			}
			memcpy(r->slots[head % RING_SLOTS].data, ends[0].mem + moff + off, len);
			r->slots[head % RING_SLOTS].len = len;
			atomic_store_explicit(&r->head, head + 1, memory_order_release);
			next = (next + 1) % rails;
			off += len;
		}
		moff = (moff + size) % (REGION - size + 1);
		moff -= moff % 64;
	}
	atomic_store(&stop, 1);
	cpu = thread_cpu_seconds() - c0;
	pthread_join(th, NULL);
	cpu += p.cpu;
	return cpu > 0 ? p.bytes / cpu : 0;
}

static int setup(unsigned int rails)
{
	struct tbr_tqp_cfg cfg = {
		.type = TBR_QPT_RC, .sq_depth = 256, .win = 1024,
		.mtu = TBR_MTU_MAX, .max_rd_atomic = 1,
	};
	struct tbr_tqp_conn conn;
	unsigned int i;

	memset(ends, 0, sizeof(ends));
	ends[0].mem = aligned_alloc(4096, REGION);
	ends[1].mem = aligned_alloc(4096, REGION);
	if (!ends[0].mem || !ends[1].mem)
		return -ENOMEM;
	memset(ends[0].mem, 0x5a, REGION);
	memset(ends[1].mem, 0, REGION);
	for (i = 0; i < rails; i++) {
		if (ring_init(&data[i]))
			return -ENOMEM;
		ends[0].out[i] = &data[i];
		ends[1].in[i] = &data[i];
	}
	if (ring_init(&ack))
		return -ENOMEM;
	ends[0].nout = rails;
	ends[1].nin = rails;
	ends[1].out[0] = &ack;
	ends[1].nout = 1;
	ends[0].in[0] = &ack;
	ends[0].nin = 1;
	for (i = 0; i < 2; i++) {
		cfg.qpn = 0x100 + i;
		ends[i].qp = tbr_tqp_create(&cfg, &ops, &ends[i]);
		if (!ends[i].qp)
			return -EINVAL;
		tbr_tqp_conn_defaults(&conn);
		conn.dest_qpn = 0x100 + !i;
		conn.sq_psn = conn.rq_psn = 0;
		/*
		 * The in-memory wire loses nothing: only an end starved of the CPU
		 * (a loaded host) lets the retransmit timer fire. A long timeout
		 * keeps that from exhausting the retries and failing the point.
		 */
		if (getenv("CORE_BENCH_RTO_MS"))
			conn.timeout_ns = strtoull(getenv("CORE_BENCH_RTO_MS"), NULL, 0) * 1000000ull;
		if (tbr_tqp_connect(ends[i].qp, &conn))
			return -EINVAL;
	}
	return 0;
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++) {
		tbr_tqp_destroy(ends[i].qp);
		free(ends[i].mem);
	}
}

static int parse_list(const char *s, unsigned int *out, int max)
{
	int n = 0;
	char *end;

	while (*s && n < max) {
		unsigned long v = strtoul(s, &end, 0);

		if (end == s)
			return -1;
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		out[n++] = v;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned int rails[MAX_RAILS] = { 1, 2, 4, 8 }, sizes[32] = {
		64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304 };
	int nr = 4, ns = 9, opt, check = 0, failed = 0;
	double secs = 0.5;

	while ((opt = getopt(argc, argv, "r:s:t:c1n:u")) != -1) {
		switch (opt) {
		case 'r': nr = parse_list(optarg, rails, MAX_RAILS); break;
		case 's': ns = parse_list(optarg, sizes, 32); break;
		case 't': secs = atof(optarg); break;
		case 'c': check = 1; break;
		case '1': single = 1; break;
		case 'u': chain = 0; break;
		case 'n': fixed_msgs = strtoull(optarg, NULL, 0); REGION = 16u << 20; break;
		default:
			fprintf(stderr, "usage: %s [-r RAILS,...] [-s SIZE,...] [-t SECONDS] [-c] [-1] [-n MSGS] [-u]\n",
				argv[0]);
			return 2;
		}
	}
	if (nr <= 0 || ns <= 0 || secs <= 0) {
		fprintf(stderr, "core_bench: bad -r/-s/-t value\n");
		return 2;
	}
	printf("rails,size,core_gbps,msgs_per_s,memcpy_gbps,ratio,cpu_util,gbps_per_cpu,"
	       "memcpy_gbps_per_cpu,ratio_per_cpu,retransmits,timeouts,pipe_gbps_per_cpu,"
	       "ratio_pipe_per_cpu\n");
	for (int r = 0; r < nr; r++) {
		if (rails[r] < 1 || rails[r] > MAX_RAILS) {
			fprintf(stderr, "core_bench: rails must be 1..%d\n", MAX_RAILS);
			return 2;
		}
		for (int s = 0; s < ns; s++) {
			pthread_t th;
			uint64_t msgs;
			double rate, mc = 0, mc_cpu = 0, pipe = 0, wall, cpu;

			if (sizes[s] < 1 || sizes[s] > REGION / 4) {
				fprintf(stderr, "core_bench: size must be 1..%u\n", REGION / 4);
				return 2;
			}
			if (setup(rails[r])) {
				fprintf(stderr, "core_bench: setup failed\n");
				return 1;
			}
			atomic_store(&stop, 0);
			cpu = cpu_seconds();
			if (!single)
				pthread_create(&th, NULL, responder, NULL);
			rate = run_point(sizes[s], secs, &msgs, &wall);
			atomic_store(&stop, 1);
			if (!single)
				pthread_join(th, NULL);
			cpu = cpu_seconds() - cpu;
			if (ends[0].errors || ends[1].errors) {
				const struct tbr_tqp_counters *a = tbr_tqp_counters(ends[0].qp);

				fprintf(stderr, "core_bench: rails %u size %u: error completions (tx %llu "
					"rtx %llu timeouts %llu); point skipped\n", rails[r], sizes[s],
					(unsigned long long)a->tx_frames, (unsigned long long)a->retransmits,
					(unsigned long long)a->timeouts);
				failed = 1;
				teardown();
				continue;
			}
			if (check && memcmp(ends[0].mem, ends[1].mem,
					    msgs * sizes[s] < REGION / 2 ? msgs * sizes[s] : REGION / 2)) {
				fprintf(stderr, "core_bench: target bytes differ from source\n");
				return 1;
			}
			if (getenv("CORE_BENCH_COUNTERS")) {
				const struct tbr_tqp_counters *a = tbr_tqp_counters(ends[0].qp);
				const struct tbr_tqp_counters *b = tbr_tqp_counters(ends[1].qp);

				fprintf(stderr, "  A: tx %llu rtx %llu fast %llu spurious %llu tmo %llu stalls %llu acks %llu | "
					"B: rx %llu dup %llu oow %llu acks %llu\n",
					(unsigned long long)a->tx_frames, (unsigned long long)a->retransmits,
					(unsigned long long)a->fast_retransmits,
					(unsigned long long)a->spurious_retransmits, (unsigned long long)a->timeouts,
					(unsigned long long)a->tx_stalls, (unsigned long long)a->acks_rcvd,
					(unsigned long long)b->rx_frames, (unsigned long long)b->duplicates,
					(unsigned long long)b->out_of_window, (unsigned long long)b->acks_sent);
			}
			if (!fixed_msgs)
				mc = memcpy_rate(sizes[s], secs, &mc_cpu);
			/* the pipeline has two threads: for the two-thread points only */
			if (!fixed_msgs && !single)
				pipe = pipe_rate(sizes[s], rails[r], secs);
			{
				double per_cpu = cpu > 0 ? rate * wall / cpu : 0;
				const struct tbr_tqp_counters *ca = tbr_tqp_counters(ends[0].qp);

				printf("%u,%u,%.2f,%.0f,%.2f,%.3f,%.2f,%.2f,%.2f,%.3f,%llu,%llu,%.2f,%.3f\n",
				       rails[r], sizes[s], rate * 8 / 1e9, msgs / wall, mc * 8 / 1e9,
				       mc ? rate / mc : 0, cpu / wall, per_cpu * 8 / 1e9, mc_cpu * 8 / 1e9,
				       mc_cpu ? per_cpu / mc_cpu : 0, (unsigned long long)ca->retransmits,
				       (unsigned long long)ca->timeouts, pipe * 8 / 1e9,
				       pipe ? per_cpu / pipe : 0);
			}
			fflush(stdout);
			teardown();
		}
	}
	return failed;
}
