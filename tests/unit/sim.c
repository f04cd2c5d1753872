// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sim.c - see sim.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

uint64_t sim_rand(struct sim *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1Dull;
}

static struct sim_ep *ep_of(void *ctx)
{
	return ctx;
}

/* A valid fast MR of @key covering [addr, addr + len), or NULL. */
static struct sim_mr *fast_mr(struct sim_ep *ep, uint32_t key, uint64_t addr,
			      uint64_t len)
{
	int i;

	for (i = 0; i < ep->nmr; i++) {
		struct sim_mr *m = &ep->mr[i];

		if (m->fast && m->valid && m->rkey == key && addr >= m->va &&
		    addr - m->va <= m->len && len <= m->len - (addr - m->va))
			return m;
	}
	return NULL;
}

static int sgl_copy(struct sim_ep *ep, const struct tbr_sge *sgl,
		    uint32_t nsge, uint64_t off, void *dst, const void *src,
		    uint32_t len)
{
	uint32_t i;

	for (i = 0; i < nsge && len; i++) {
		uint64_t l = sgl[i].length;
		uint32_t k;

		if (sgl[i].lkey != SIM_LKEY &&
		    !fast_mr(ep, sgl[i].lkey, sgl[i].addr, l))
			return -TBR_WC_LOC_PROT_ERR;
		if (off >= l) {
			off -= l;
			continue;
		}
		k = (uint32_t)(l - off < len ? l - off : len);
		if (dst)
			memcpy(dst, (uint8_t *)(uintptr_t)sgl[i].addr + off, k);
		else
			memcpy((uint8_t *)(uintptr_t)sgl[i].addr + off, src, k);
		dst = dst ? (uint8_t *)dst + k : NULL;
		src = src ? (const uint8_t *)src + k : NULL;
		len -= k;
		off = 0;
	}
	return len ? -TBR_WC_LOC_PROT_ERR : 0;
}

static int op_sgl_read(void *ctx, const struct tbr_sge *sgl, u32 nsge,
		       u64 off, void *dst, u32 len)
{
	return sgl_copy(ep_of(ctx), sgl, nsge, off, dst, NULL, len);
}

static int op_sgl_write(void *ctx, const struct tbr_sge *sgl, u32 nsge,
			u64 off, const void *src, u32 len)
{
	return sgl_copy(ep_of(ctx), sgl, nsge, off, NULL, src, len);
}

/* the MR bytes, or NULL with *@err the completion status the core wants */
static uint8_t *mr_find(struct sim_ep *ep, uint32_t rkey, uint64_t va,
			uint32_t len, uint32_t acc, int *err)
{
	int i;

	*err = -TBR_WC_REM_INV_REQ_ERR;
	if ((ep->qp_access & acc) != acc)
		return NULL;
	*err = -TBR_WC_REM_ACCESS_ERR;
	for (i = 0; i < ep->nmr; i++) {
		struct sim_mr *m = &ep->mr[i];

		if (m->rkey != rkey || (m->fast && !m->valid))
			continue;
		if ((m->access & acc) != acc || va < m->va ||
		    va - m->va > m->len || len > m->len - (va - m->va))
			return NULL;
		return m->base + (va - m->va);
	}
	return NULL;
}

static int op_mr_write(void *ctx, u32 rkey, u64 va, const void *src, u32 len)
{
	int err;
	uint8_t *p = mr_find(ep_of(ctx), rkey, va, len, SIM_ACC_WRITE, &err);

	if (!p)
		return err;
	memcpy(p, src, len);
	return 0;
}

static int op_mr_read(void *ctx, u32 rkey, u64 va, void *dst, u32 len)
{
	int err;
	uint8_t *p = mr_find(ep_of(ctx), rkey, va, len, SIM_ACC_READ, &err);

	if (!p)
		return err;
	memcpy(dst, p, len);
	return 0;
}

static int op_mr_check(void *ctx, u32 rkey, u64 va, u32 len, u32 access)
{
	int err;

	return mr_find(ep_of(ctx), rkey, va, len, SIM_ACC_READ, &err) ? 0 : err;
}

static int op_mr_atomic(void *ctx, u32 rkey, u64 va, enum tbr_atomic_op op,
			u64 compare_add, u64 swap, u64 *orig)
{
	int err;
	uint8_t *p = mr_find(ep_of(ctx), rkey, va, 8, SIM_ACC_ATOMIC, &err);
	uint64_t v;

	if (!p)
		return err;
	memcpy(&v, p, 8);
	*orig = v;
	if (op == TBR_ATOMIC_FETCH_ADD)
		v += compare_add;
	else if (v == compare_add)
		v = swap;
	memcpy(p, &v, 8);
	return 0;
}

static int op_get_recv(void *ctx, struct tbr_tqp_recv *wqe)
{
	struct sim_ep *ep = ep_of(ctx);

	if (ep->rq_head == ep->rq_tail)
		return -ENOENT;
	*wqe = ep->rq[ep->rq_head++ % SIM_RQ];
	return 0;
}

static void op_complete(void *ctx, const struct tbr_cqe *cqe)
{
	struct sim_ep *ep = ep_of(ctx);

	if (ep->ncq < SIM_CQ)
		ep->cq[ep->ncq] = *cqe;
	ep->ncq++;
}

/* Frames are recycled through a free list: no allocation per frame. */
static struct sim_frame *frame_get(struct sim *s)
{
	struct sim_frame *f = s->free_frames;

	if (f)
		s->free_frames = f->next;
	else if (!(f = malloc(sizeof(*f))))
		abort();
	f->next = NULL;
	f->len = 0;
	return f;
}

static void frame_put(struct sim *s, struct sim_frame *f)
{
	f->next = s->free_frames;
	s->free_frames = f;
}

static void *op_tx_alloc(void *ctx, u32 len)
{
	struct sim_ep *ep = ep_of(ctx);
	struct sim_frame *f;

	if (ep->sim->f.tx_cap && ep->sim->inflight >= ep->sim->f.tx_cap)
		return NULL;
	f = frame_get(ep->sim);
	ep->sim->inflight++;
	return f->data;
}

static struct sim_frame *frame_of(void *buf)
{
	return (struct sim_frame *)((uint8_t *)buf -
				    offsetof(struct sim_frame, data));
}

static void heap_push(struct sim *s, struct sim_frame *f)
{
	unsigned int i;

	if (s->nheap == s->heap_cap) {
		s->heap_cap = s->heap_cap ? 2 * s->heap_cap : 1024;
		s->heap = realloc(s->heap, s->heap_cap * sizeof(*s->heap));
		if (!s->heap)
			abort();
	}
	i = s->nheap++;
	while (i) {
		unsigned int p = (i - 1) / 2;
		struct sim_frame *q = s->heap[p];

		if (q->at < f->at || (q->at == f->at && q->seq < f->seq))
			break;
		s->heap[i] = q;
		i = p;
	}
	s->heap[i] = f;
}

static struct sim_frame *heap_pop(struct sim *s)
{
	struct sim_frame *top = s->heap[0], *last;
	unsigned int i = 0;

	last = s->heap[--s->nheap];
	while (s->nheap) {
		unsigned int c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap &&
		    (s->heap[c + 1]->at < s->heap[c]->at ||
		     (s->heap[c + 1]->at == s->heap[c]->at &&
		      s->heap[c + 1]->seq < s->heap[c]->seq)))
			c++;
		if (last->at < s->heap[c]->at ||
		    (last->at == s->heap[c]->at && last->seq < s->heap[c]->seq))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

static void sim_schedule(struct sim *s, struct sim_frame *f)
{
	unsigned int rail;

	if (s->f.spray_random)
		rail = (unsigned int)(sim_rand(s) % s->f.rails);
	else
		rail = s->rr++ % s->f.rails;
	f->rail = (int)rail;
	f->at = s->now + s->base_ns + rail * s->f.rail_skew_ns +
		(s->f.jitter_ns ? sim_rand(s) % s->f.jitter_ns : 0);
	f->seq = s->seq++;
	if (s->f.drop_to[f->dst]) {
		s->f.drop_to[f->dst]--;
		s->dropped++;
		s->inflight--;
		frame_put(s, f);
		return;
	}
	if ((s->f.rail_down_mask >> rail) & 1 ||
	    sim_rand(s) % 100 < s->f.drop_pct) {
		s->dropped++;
		s->inflight--;
		frame_put(s, f);
		return;
	}
	if (s->f.bneck_ns) {
		uint64_t *idle = &s->bneck_free[f->dst];
		uint64_t start = *idle > s->now ? *idle : s->now;

		if ((start - s->now) / s->f.bneck_ns >= s->f.bneck_cap) {
			s->dropped++;
			s->bneck_drops++;
			s->inflight--;
			frame_put(s, f);
			return;
		}
		*idle = start + s->f.bneck_ns;
		f->at += *idle - s->now;
	}
	if (s->now < s->f.dark_until && f->at >= s->f.dark_from &&
	    (!s->f.dark_rails || (s->f.dark_rails >> rail) & 1)) {
		s->dropped++;	/* still on the path when it went dark */
		s->inflight--;
		frame_put(s, f);
		return;
	}
	heap_push(s, f);
}

static void op_tx_send(void *ctx, void *buf, u32 len)
{
	struct sim_ep *ep = ep_of(ctx);
	struct sim *s = ep->sim;
	struct sim_frame *f = frame_of(buf);

	ep->tx_frames++;
	if (len > ep->tx_max_len)
		ep->tx_max_len = len;
	f->len = len;
	f->dst = !ep->id;
	if (sim_rand(s) % 100 < s->f.dup_pct) {
		struct sim_frame *d = frame_get(s);

		memcpy(d, f, offsetof(struct sim_frame, data) + len);
		s->inflight++;
		s->duplicated++;
		sim_schedule(s, d);
	}
	sim_schedule(s, f);
}

static void op_tx_abort(void *ctx, void *buf)
{
	struct sim_ep *ep = ep_of(ctx);

	ep->sim->inflight--;
	frame_put(ep->sim, frame_of(buf));
}

static void op_qp_error(void *ctx, u32 status)
{
	struct sim_ep *ep = ep_of(ctx);

	ep->qp_error_calls++;
	ep->qp_error_status = status;
}

/* invalidate the valid fast MR of @key; false if there is none */
static bool fast_inv(struct sim_ep *ep, uint32_t key)
{
	int i;

	for (i = 0; i < ep->nmr; i++) {
		struct sim_mr *m = &ep->mr[i];

		if (m->fast && m->valid && m->rkey == key) {
			m->valid = false;
			return true;
		}
	}
	return false;
}

static int op_invalidate(void *ctx, u32 rkey)
{
	struct sim_ep *ep = ep_of(ctx);

	if (!fast_inv(ep, rkey))
		return -TBR_WC_REM_INV_REQ_ERR;
	ep->nremote_inv++;
	return 0;
}

static int op_local(void *ctx, u64 cookie)
{
	struct sim_ep *ep = ep_of(ctx);
	uint32_t key = (uint32_t)cookie, idx = (cookie >> 32) & 0xff;
	struct sim_mr *m;

	ep->nlocal++;
	switch (cookie >> 62) {
	case 1:
		if ((int)idx >= ep->nmr)
			return -TBR_WC_LOC_QP_OP_ERR;
		m = &ep->mr[idx];
		if (!m->fast || m->valid ||
		    (m->rkey & 0xffffff00u) != (key & 0xffffff00u))
			return -TBR_WC_LOC_QP_OP_ERR;
		m->rkey = key;
		m->valid = true;
		return 0;
	case 2:
		return fast_inv(ep, key) ? 0 : -TBR_WC_LOC_QP_OP_ERR;
	case 3:
		return -(int)key;
	}
	return -TBR_WC_LOC_QP_OP_ERR;
}

static const struct tbr_ops sim_ops = {
	.invalidate = op_invalidate,
	.local = op_local,
	.sgl_read = op_sgl_read,
	.sgl_write = op_sgl_write,
	.mr_write = op_mr_write,
	.mr_read = op_mr_read,
	.mr_check = op_mr_check,
	.mr_atomic = op_mr_atomic,
	.get_recv = op_get_recv,
	.complete = op_complete,
	.tx_alloc = op_tx_alloc,
	.tx_send = op_tx_send,
	.tx_abort = op_tx_abort,
	.qp_error = op_qp_error,
};

void sim_default_cfg(struct tbr_tqp_cfg *cfg, enum tbr_tqp_type type)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->type = type;
	cfg->sq_depth = 256;
	cfg->win = 256;
	cfg->mtu = 1024;
	cfg->max_rd_atomic = 8;
	cfg->qkey = 0x1234;
}

struct sim *sim_new(enum tbr_tqp_type type, const struct tbr_tqp_cfg *cfg,
		    const struct tbr_tqp_conn *conn, uint64_t seed)
{
	struct sim *s = calloc(1, sizeof(*s));
	int i;

	if (!s)
		return NULL;
	s->rng = seed * 0x9E3779B97F4A7C15ull + 1;
	s->base_ns = 2000;
	s->f.rails = 1;
	for (i = 0; i < 2; i++) {
		struct tbr_tqp_cfg c = *cfg;
		struct tbr_tqp_conn k = *conn;
		struct sim_ep *ep = &s->ep[i];

		c.type = type;
		c.qpn = i ? 0x22 : 0x11;
		if (cfg->pkeys)
			c.pkeys = &cfg->pkeys[i];
		ep->sim = s;
		ep->id = i;
		ep->qp_access = SIM_ACC_WRITE | SIM_ACC_READ | SIM_ACC_ATOMIC;
		ep->cq = calloc(SIM_CQ, sizeof(*ep->cq));
		ep->qp = tbr_tqp_create(&c, &sim_ops, ep);
		if (!ep->cq || !ep->qp)
			goto err;
		k.dest_qpn = i ? 0x11 : 0x22;
		k.conn_id = 7;
		if (tbr_tqp_connect(ep->qp, &k))
			goto err;
	}
	return s;
err:
	sim_free(s);
	return NULL;
}

void sim_free(struct sim *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < 2; i++) {
		tbr_tqp_destroy(s->ep[i].qp);
		free(s->ep[i].cq);
	}
	while (s->nheap)
		free(heap_pop(s));
	while (s->free_frames) {
		struct sim_frame *f = s->free_frames;

		s->free_frames = f->next;
		free(f);
	}
	free(s->heap);
	free(s);
}

int sim_reset(struct sim *s, const struct tbr_tqp_conn *conn, uint64_t seed)
{
	int i;

	while (s->nheap)
		frame_put(s, heap_pop(s));
	s->rng = seed * 0x9E3779B97F4A7C15ull + 1;
	s->now = 0;
	s->seq = 0;
	s->rr = 0;
	s->inflight = 0;
	s->dropped = s->duplicated = s->delivered = 0;
	s->bneck_free[0] = s->bneck_free[1] = 0;
	s->bneck_drops = 0;
	memset(&s->f, 0, sizeof(s->f));
	s->f.rails = 1;
	s->tap = NULL;
	s->tap_ctx = NULL;
	for (i = 0; i < 2; i++) {
		struct sim_ep *ep = &s->ep[i];
		struct tbr_tqp_conn k = *conn;

		tbr_tqp_flush(ep->qp);
		ep->nmr = 0;
		ep->rq_head = ep->rq_tail = 0;
		ep->ncq = 0;
		ep->qp_error_calls = 0;
		ep->qp_error_status = 0;
		ep->tx_frames = 0;
		ep->nlocal = 0;
		ep->nremote_inv = 0;
		k.dest_qpn = i ? 0x11 : 0x22;
		k.conn_id = 7;
		if (tbr_tqp_connect(ep->qp, &k))
			return -1;
	}
	return 0;
}

int sim_add_mr(struct sim_ep *ep, uint32_t rkey, void *buf, uint64_t len,
	       uint32_t access)
{
	struct sim_mr *m;

	if (ep->nmr == SIM_MAX_MR)
		return -1;
	m = &ep->mr[ep->nmr++];
	memset(m, 0, sizeof(*m));
	m->rkey = rkey;
	m->base = buf;
	m->va = (uint64_t)(uintptr_t)buf;
	m->len = len;
	m->access = access;
	return 0;
}

int sim_add_fast_mr(struct sim_ep *ep, uint32_t key, void *buf, uint64_t len,
		    uint32_t access)
{
	if (sim_add_mr(ep, key, buf, len, access))
		return -1;
	ep->mr[ep->nmr - 1].fast = true;
	return ep->nmr - 1;
}

void sim_post_recv(struct sim_ep *ep, uint64_t wr_id, void *buf, uint32_t len)
{
	struct tbr_tqp_recv *w = &ep->rq[ep->rq_tail++ % SIM_RQ];

	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->num_sge = 1;
	w->sge[0].addr = (uint64_t)(uintptr_t)buf;
	w->sge[0].length = len;
	w->sge[0].lkey = SIM_LKEY;
}

int sim_post(struct sim_ep *ep, const struct tbr_send_wr *wr)
{
	return tbr_tqp_post_send(ep->qp, wr, ep->sim->now);
}

int sim_inject(struct sim *s, int dst, const void *buf, uint32_t len)
{
	return tbr_tqp_rx(s->ep[dst].qp, buf, len, s->now);
}

static uint64_t sim_next_event(struct sim *s)
{
	uint64_t t = TBR_NO_DEADLINE;
	int i;

	if (s->nheap)
		t = s->heap[0]->at > s->f.stall_until ? s->heap[0]->at :
		    s->f.stall_until;
	for (i = 0; i < 2; i++) {
		uint64_t d = tbr_tqp_next_deadline(s->ep[i].qp);

		if (d < t)
			t = d;
	}
	return t;
}

static void sim_step(struct sim *s, uint64_t t)
{
	int i;

	if (t > s->now)
		s->now = t;
	while (s->nheap && s->heap[0]->at <= s->now && s->now >= s->f.stall_until) {
		struct sim_frame *f = heap_pop(s);

		s->inflight--;
		s->delivered++;
		if (s->tap)
			s->tap(s, f->dst, f->data, f->len);
		tbr_tqp_rx(s->ep[f->dst].qp, f->data, f->len, s->now);
		frame_put(s, f);
	}
	for (i = 0; i < 2; i++)
		tbr_tqp_progress(s->ep[i].qp, s->now);
}

bool sim_run(struct sim *s, uint64_t max_ns)
{
	uint64_t end = s->now + max_ns;

	for (;;) {
		uint64_t t = sim_next_event(s);

		if (t == TBR_NO_DEADLINE)
			return true;
		if (t > end) {
			s->now = end;
			return false;
		}
		sim_step(s, t);
	}
}

void sim_run_until(struct sim *s, uint64_t t_end)
{
	for (;;) {
		uint64_t t = sim_next_event(s);

		if (t == TBR_NO_DEADLINE || t > t_end)
			break;
		sim_step(s, t);
	}
	if (s->now < t_end)
		s->now = t_end;
	sim_step(s, s->now);
}
