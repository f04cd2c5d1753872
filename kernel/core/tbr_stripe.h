/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_stripe.h - striping frames over rails of unequal speed by their
 * measured drain rate (docs/architecture.md "Striping by drain rate").
 * OS-independent like the rest of core/: the caller passes the time (ns,
 * monotonic) and serializes the calls per link (link/: link->lock).
 *
 * Each rail keeps the bytes of its TX frames reserved or posted and not yet
 * completed (@out) and the rate at which its TX ring drains (@rate, bytes
 * per ms = kB/s), measured from TX completions: a completion whose frame
 * was posted before the previous completion waited behind it, so the time
 * between the two is the ring draining; a frame posted to an idle ring tells
 * latency, not rate, and is left out. Samples are summed over a window
 * (TBR_STRIPE_WIN_NS and TBR_STRIPE_WIN_FRAMES at least) so that a burst of
 * completions after a host stall averages out, then folded in with weight
 * 1/4 (the first window sets the rate).
 *
 * A frame of @len bytes would be through rail r at (out_r + len) / rate_r.
 * The scheduler takes, among the rails with a free descriptor, the one where
 * it would be through first (the fast rail); and it takes a slower rail
 * whose fast peer has no descriptor free only if the frames already queued
 * there are through before the frame would be through the fast rail once a
 * descriptor frees. Otherwise it waits for a descriptor (the next TX
 * completion): every rail stays busy (a slow one holds what it drains while
 * the fast one drains its whole ring), and frames arrive at most about one
 * frame time of the slowest rail out of their sending order, which the
 * transport's reordering window absorbs, instead of a slow rail's whole
 * ring late (a full ring of a rail 4x slower than its peer arrives 3 ring
 * times late, beyond the window: spurious retransmissions).
 */
#ifndef TBR_STRIPE_H
#define TBR_STRIPE_H

#include "tbr_os.h"

/* a measuring window: at least this long and this many frames, or this many frames */
#define TBR_STRIPE_WIN_NS	20000000ull
#define TBR_STRIPE_WIN_FRAMES	8
#define TBR_STRIPE_WIN_MAX	256
/* a rail of unknown rate and speed: 10 Gb/s, in bytes per ms */
#define TBR_STRIPE_RATE_DEFAULT	1250000u
/*
 * a measured rate no window renewed for this long is forgotten: a rail the
 * scheduler passed over (measured slow once, through a host stall) gets no
 * frames queued behind others and so no new window; forgotten, it is taken
 * at its medium's speed again until measured anew
 */
#define TBR_STRIPE_STALE_NS	1000000000ull
/* a rail with frames out and no completion for this long is not waited for */
#define TBR_STRIPE_STUCK_NS	100000000ull

struct tbr_stripe {
	u64 out;		/* bytes of TX frames reserved or posted, not back */
	u64 last_done;		/* the last TX completion (ns), 0 none */
	u64 win_ns;		/* this window: time spent draining */
	u32 win_bytes;		/* ... and the bytes drained meanwhile */
	u32 win_frames;
	u32 rate;		/* measured, bytes per ms; 0 not yet */
	u32 windows;		/* windows measured since the reset */
	u64 rate_at;		/* when @rate was last renewed (ns) */
};

/* The rail comes up: rate unknown until measured again (@out is kept). */
static inline void tbr_stripe_reset(struct tbr_stripe *s)
{
	s->last_done = 0;
	s->win_ns = 0;
	s->win_bytes = 0;
	s->win_frames = 0;
	s->rate = 0;
	s->windows = 0;
	s->rate_at = 0;
}

/* Forget a measured rate no window renewed for TBR_STRIPE_STALE_NS (see above). */
static inline void tbr_stripe_expire(struct tbr_stripe *s, u64 now)
{
	if (s->rate && now - s->rate_at > TBR_STRIPE_STALE_NS)
		s->rate = 0;
}

/* A TX frame of @size bytes, posted at @post, completed at @now. */
static inline void tbr_stripe_done(struct tbr_stripe *s, u64 post, u32 size, u64 now)
{
	u64 last = s->last_done, r;

	s->last_done = now;
	if (!last || post > last)
		return;		/* posted to an idle ring: latency, not drain */
	s->win_ns += now > last ? now - last : 0;
	s->win_bytes += size;
	s->win_frames++;
	if (s->win_frames < TBR_STRIPE_WIN_MAX &&
	    (s->win_frames < TBR_STRIPE_WIN_FRAMES || s->win_ns < TBR_STRIPE_WIN_NS))
		return;
	if (s->win_ns) {
		r = (u64)s->win_bytes * 1000000ull / s->win_ns;
		if (!r)
			r = 1;
		if (r > 0xffffffffull)
			r = 0xffffffffull;
		s->rate = s->rate ? (u32)(((u64)s->rate * 3 + r) / 4) : (u32)r;
		s->rate_at = now;
		s->windows++;
	}
	s->win_ns = 0;
	s->win_bytes = 0;
	s->win_frames = 0;
}

/* The rate the scheduler uses: measured, else the medium's speed (Mb/s, 0 unknown), else a default. */
static inline u32 tbr_stripe_rate(const struct tbr_stripe *s, u64 speed_mbps)
{
	if (s->rate)
		return s->rate;
	if (speed_mbps)
		return speed_mbps * 125 > 0xffffffffull ? 0xffffffffu : (u32)(speed_mbps * 125);
	return TBR_STRIPE_RATE_DEFAULT;
}

/* The choice among a link's rails for one frame (fill with tbr_stripe_consider()). */
struct tbr_stripe_pick {
	int best;		/* earliest through among those with a descriptor, -1 none */
	int fast;		/* earliest through among all, -1 none */
	u64 best_end, fast_end;	/* out + len of each */
	u32 best_rate, fast_rate;
};

static inline void tbr_stripe_pick_init(struct tbr_stripe_pick *p)
{
	p->best = -1;
	p->fast = -1;
	p->best_end = p->fast_end = 0;
	p->best_rate = p->fast_rate = 1;
}

/* a / ra < b / rb, without dividing (out < 2^40, rate < 2^32) */
static inline bool tbr_stripe_sooner(u64 a, u32 ra, u64 b, u32 rb)
{
	return a * rb < b * ra;
}

/*
 * Rail @i, with @out bytes out at @rate, for a frame of @len: @credit when
 * it has a descriptor the frame may take, @waitable when a descriptor of it
 * will free (frames out, not stuck). Rails considered in round-robin order:
 * the first of equals wins.
 */
static inline void tbr_stripe_consider(struct tbr_stripe_pick *p, int i, u64 out,
				       u32 rate, u32 len, bool credit, bool waitable)
{
	u64 end = out + len;

	if ((credit || waitable) &&
	    (p->fast < 0 || tbr_stripe_sooner(end, rate, p->fast_end, p->fast_rate))) {
		p->fast = i;
		p->fast_end = end;
		p->fast_rate = rate;
	}
	if (credit && (p->best < 0 || tbr_stripe_sooner(end, rate, p->best_end, p->best_rate))) {
		p->best = i;
		p->best_end = end;
		p->best_rate = rate;
	}
}

/*
 * Whether the frame may go on p->best now (p->best >= 0): it is the fast
 * rail, or what is queued on it is through no later than the frame would be
 * through the fast rail. False: wait for the fast rail's next completion.
 */
static inline bool tbr_stripe_go(const struct tbr_stripe_pick *p, u32 len)
{
	if (p->best == p->fast)
		return true;
	return (p->best_end - len) * p->fast_rate <= p->fast_end * p->best_rate;
}

#endif /* TBR_STRIPE_H */
