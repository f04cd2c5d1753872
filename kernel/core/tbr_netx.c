// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_netx.c - tbrN's fragment frames, the receive side: parse, reassemble,
 * hand up in order, give up what will not come (tbr_netx.h has the rule).
 */
#include "tbr_netx.h"

int tbr_netx_parse(const void *buf, u32 len, struct tbr_netx_frag *f)
{
	const u8 *p = buf;
	u32 n;

	if (len <= TBR_NETX_HDR_SIZE)
		return -EINVAL;
	n = len - TBR_NETX_HDR_SIZE;
	f->flags = p[1];
	f->frag = p[2];
	f->nfrags = p[3];
	f->seq = tbr_get_be32(p + 4);
	f->len = tbr_get_be32(p + 8);
	f->frag_size = tbr_get_be16(p + 12);
	f->csum_start = tbr_get_be16(p + 14);
	f->csum_offset = tbr_get_be16(p + 16);
	f->gso_size = tbr_get_be16(p + 18);
	f->gso_type = p[20];
	if (p[0] != TBR_NETX_VER || !f->frag_size || f->len < TBR_NETX_ETH_HLEN ||
	    f->len > TBR_NETX_PKT_MAX || !f->nfrags || f->nfrags > TBR_NETX_FRAGS_MAX ||
	    f->frag >= f->nfrags ||
	    (f->len + f->frag_size - 1) / f->frag_size != f->nfrags)
		return -EINVAL;
	f->off = (u32)f->frag * f->frag_size;
	f->n = n;
	if (f->frag + 1 < f->nfrags)
		return n == f->frag_size ? 0 : -EINVAL;
	return f->off + n == f->len ? 0 : -EINVAL;
}

static struct tbr_netx_slot *tbr_netx_slot(struct tbr_netx_win *w, u32 seq)
{
	return &w->slot[seq % TBR_NETX_WIN];
}

static void tbr_netx_slot_free(struct tbr_netx_slot *s, const struct tbr_netx_ops *ops,
			       void *ctx)
{
	if (s->pkt)
		ops->drop(ctx, s->pkt);
	memset(s, 0, sizeof(*s));
}

void tbr_netx_win_init(struct tbr_netx_win *w)
{
	memset(w, 0, sizeof(*w));
}

void tbr_netx_win_reset(struct tbr_netx_win *w, const struct tbr_netx_ops *ops, void *ctx)
{
	u32 i;

	for (i = 0; i < TBR_NETX_WIN; i++)
		if (w->slot[i].nfrags)
			tbr_netx_slot_free(&w->slot[i], ops, ctx);
	w->synced = false;
	w->flushing = false;
	w->next = 0;
	w->hi = 0;
	w->rail_seen = 0;	/* numbers of the old numbering */
}

/* Hand complete packets up in order. */
static void tbr_netx_drain(struct tbr_netx_win *w, const struct tbr_netx_ops *ops, void *ctx)
{
	struct tbr_netx_slot *s;

	while (w->next != w->hi) {
		s = tbr_netx_slot(w, w->next);
		if (!s->nfrags || s->got < s->nfrags)
			break;
		if (s->pkt)
			ops->deliver(ctx, s->pkt);
		s->pkt = NULL;
		tbr_netx_slot_free(s, ops, ctx);
		w->next++;
	}
}

static u64 tbr_netx_deadline(const struct tbr_netx_win *w);

/* Give the oldest packet up (incomplete or never seen) at @now, for @why. */
static void tbr_netx_skip(struct tbr_netx_win *w, enum tbr_netx_cnt why, u64 now,
			  const struct tbr_netx_ops *ops, void *ctx)
{
	struct tbr_netx_slot *s = tbr_netx_slot(w, w->next);
	u64 since = tbr_netx_deadline(w) - TBR_NETX_HOLD_MS;

	ops->count(ctx, s->nfrags ? TBR_NETX_RX_GIVEN_UP : TBR_NETX_RX_MISSING, 1);
	ops->count(ctx, why, 1);
	/* how long what is behind it waited for it (from the first seen past it) */
	if (w->next + 1 != w->hi && now > since)
		ops->count(ctx, TBR_NETX_RX_HOLD_MS, (u32)(now - since));
	tbr_netx_slot_free(s, ops, ctx);
	w->next++;
}

/* rails silent at the last sample, if recent enough to tell */
static u32 tbr_netx_silent(const struct tbr_netx_win *w, u64 now)
{
	return now - w->sample_at <= TBR_NETX_SILENT_MS ? w->rail_silent : 0;
}

bool tbr_netx_win_past(const struct tbr_netx_win *w, u32 seq, u64 now)
{
	u32 wait = w->rail_up & ~tbr_netx_silent(w, now), r;

	if (!w->rail_up || !w->sample_at)
		return false;	/* the rails not known yet: the timeouts decide */
	for (r = 0; r < TBR_NETX_RAILS; r++) {
		if (!(wait & (1U << r)))
			continue;
		if (!(w->rail_seen & (1U << r)) || (s32)(w->rail_newest[r] - seq) <= 0)
			return false;
	}
	return true;
}

/*
 * When the oldest waiting packet's last resort comes: TBR_NETX_HOLD_MS after
 * the first packet seen at or past it. w->next != w->hi.
 */
static u64 tbr_netx_deadline(const struct tbr_netx_win *w)
{
	u32 seq;

	for (seq = w->next; seq != w->hi; seq++)
		if (w->slot[seq % TBR_NETX_WIN].nfrags)
			break;
	return w->slot[seq % TBR_NETX_WIN].stamp + TBR_NETX_HOLD_MS;
}

/* Give up, oldest first, what the rails moved past; hand up what follows. */
static void tbr_netx_settle(struct tbr_netx_win *w, u64 now, const struct tbr_netx_ops *ops,
			    void *ctx)
{
	tbr_netx_drain(w, ops, ctx);
	while (w->next != w->hi && tbr_netx_win_past(w, w->next, now)) {
		tbr_netx_skip(w, TBR_NETX_RX_GIVEUP_RAILS, now, ops, ctx);
		tbr_netx_drain(w, ops, ctx);
	}
}

u64 tbr_netx_win_when(const struct tbr_netx_win *w, u64 now)
{
	u32 r, silent = tbr_netx_silent(w, now);
	u64 when, t;

	if (w->next == w->hi)
		return 0;
	when = tbr_netx_deadline(w);
	if (w->flushing && w->flush_at < when)
		when = w->flush_at;
	/* a rail still delivering may fall silent: look then */
	for (r = 0; r < TBR_NETX_RAILS; r++) {
		if (!(w->rail_up & ~silent & (1U << r)))
			continue;
		if ((w->rail_seen & (1U << r)) && (s32)(w->rail_newest[r] - w->next) > 0)
			continue;
		/* samples every TBR_NETX_SILENT_MS / 2 until it is silent */
		t = w->rail_since[r] + TBR_NETX_SILENT_MS;
		if (w->sample_at + TBR_NETX_SILENT_MS / 2 < t)
			t = w->sample_at + TBR_NETX_SILENT_MS / 2;
		if (t <= now || !w->sample_at)
			t = now + 1;
		if (t < when)
			when = t;
	}
	return when > now ? when : now + 1;
}

u64 tbr_netx_win_tick(struct tbr_netx_win *w, u64 now, const struct tbr_netx_ops *ops, void *ctx)
{
	tbr_netx_settle(w, now, ops, ctx);
	while (w->next != w->hi) {
		if (w->flushing && (s32)(w->flush_hi - w->next) <= 0)
			w->flushing = false;
		if (w->flushing && w->flush_at <= now)
			tbr_netx_skip(w, TBR_NETX_RX_GIVEUP_CUT, now, ops, ctx);
		else if (tbr_netx_deadline(w) <= now)
			tbr_netx_skip(w, TBR_NETX_RX_GIVEUP_HOLD, now, ops, ctx);
		else
			break;
		tbr_netx_settle(w, now, ops, ctx);
	}
	if (w->next == w->hi)
		w->flushing = false;
	return tbr_netx_win_when(w, now);
}

void tbr_netx_win_sample(struct tbr_netx_win *w, u32 up, const u64 *frames, u64 now)
{
	/*
	 * Silence counts only as seen by samples at most TBR_NETX_SILENT_MS
	 * apart: after a longer gap (no hole to watch, or this host stalled,
	 * its rails' deliveries with it) every rail starts anew.
	 */
	bool gap = !w->sample_at || now - w->sample_at > TBR_NETX_SILENT_MS;
	u32 r;

	if (TBR_NETX_RAILS < 32)
		up &= (1U << TBR_NETX_RAILS) - 1;
	for (r = 0; r < TBR_NETX_RAILS; r++) {
		if (!(up & (1U << r))) {
			w->rail_seen &= ~(1U << r);
			w->rail_silent &= ~(1U << r);
			continue;
		}
		if (gap || !(w->rail_up & (1U << r)) || frames[r] != w->rail_frames[r]) {
			w->rail_frames[r] = frames[r];
			w->rail_since[r] = now;
		}
		if (now - w->rail_since[r] >= TBR_NETX_SILENT_MS)
			w->rail_silent |= 1U << r;
		else
			w->rail_silent &= ~(1U << r);
	}
	w->rail_up = up;
	w->sample_at = now;
}

void tbr_netx_win_rail_up(struct tbr_netx_win *w, u32 rail)
{
	if (rail >= TBR_NETX_RAILS || (w->rail_up & (1U << rail)))
		return;
	w->rail_up |= 1U << rail;
	w->rail_seen &= ~(1U << rail);
	w->rail_silent &= ~(1U << rail);
	w->rail_frames[rail] = 0;
	w->rail_since[rail] = 0;	/* counts as changed at the next sample */
}

void tbr_netx_win_rail_down(struct tbr_netx_win *w, u32 rail, u64 now)
{
	if (rail < TBR_NETX_RAILS) {
		w->rail_up &= ~(1U << rail);
		w->rail_seen &= ~(1U << rail);
		w->rail_silent &= ~(1U << rail);
	}
	/* what was in flight on it is lost */
	if (w->next != w->hi) {
		w->flushing = true;
		w->flush_hi = w->hi;
		w->flush_at = now + TBR_NETX_CUT_MS;
	}
}

/* A fragment seen on @rail: the rail moved on to its packet. */
static void tbr_netx_rail_saw(struct tbr_netx_win *w, u32 rail, u32 seq)
{
	u32 bit;

	if (rail >= TBR_NETX_RAILS)
		return;
	bit = 1U << rail;
	if (!(w->rail_up & bit))
		tbr_netx_win_rail_up(w, rail);
	w->rail_silent &= ~bit;
	if (!(w->rail_seen & bit) || (s32)(seq - w->rail_newest[rail]) > 0)
		w->rail_newest[rail] = seq;
	w->rail_seen |= bit;
}

void tbr_netx_win_rx(struct tbr_netx_win *w, const struct tbr_netx_frag *f, const u8 *data,
		 u32 rail, u64 now, const struct tbr_netx_ops *ops, void *ctx)
{
	struct tbr_netx_slot *s;
	u32 seq = f->seq;
	s32 d;

	ops->count(ctx, TBR_NETX_RX_FRAGS, 1);
	if (!w->synced) {
		w->synced = true;
		w->next = seq;
		w->hi = seq;
	}
	d = (s32)(seq - w->next);
	if (d < 0 && d >= -TBR_NETX_WIN) {
		ops->count(ctx, TBR_NETX_RX_LATE, 1);	/* of a packet handed or given up */
		tbr_netx_rail_saw(w, rail, seq);
		tbr_netx_settle(w, now, ops, ctx);
		return;
	}
	if (d < 0 || d >= 4 * TBR_NETX_WIN) {	/* the peer's numbering restarted */
		ops->count(ctx, TBR_NETX_RX_RESYNC, 1);
		tbr_netx_win_reset(w, ops, ctx);
		w->synced = true;
		w->next = seq;
		w->hi = seq;
	}
	while ((s32)(seq - w->next) >= TBR_NETX_WIN) {	/* the window moves */
		if (w->next == w->hi)
			w->hi++;
		tbr_netx_skip(w, TBR_NETX_RX_GIVEUP_WINDOW, now, ops, ctx);
		tbr_netx_drain(w, ops, ctx);
	}
	if ((s32)(seq - w->hi) >= 0)
		w->hi = seq + 1;
	tbr_netx_rail_saw(w, rail, seq);
	s = tbr_netx_slot(w, seq);
	if (!s->nfrags) {
		s->pkt = ops->alloc(ctx, f->len);
		s->seq = seq;
		s->len = f->len;
		s->nfrags = f->nfrags;
		s->frag_size = f->frag_size;
		s->stamp = now;
	} else if (s->seq != seq || s->nfrags != f->nfrags || s->frag_size != f->frag_size ||
		   s->len != f->len) {
		ops->count(ctx, TBR_NETX_RX_BAD, 1);
		goto out;
	}
	if (s->pkt && !(s->have & (1ULL << f->frag))) {
		ops->copy(ctx, s->pkt, f->off, data, f->n);
		s->have |= 1ULL << f->frag;
		if (++s->got == s->nfrags) {
			/* every fragment carries the offloads: apply them now */
			if (ops->finish(ctx, s->pkt, f)) {
				ops->count(ctx, TBR_NETX_RX_BAD, 1);
				ops->drop(ctx, s->pkt);
				s->pkt = NULL;	/* complete, nothing to hand up */
			}
			if (seq != w->next)
				ops->count(ctx, TBR_NETX_RX_REORDERED, 1);
		}
	}
out:
	tbr_netx_settle(w, now, ops, ctx);
}
