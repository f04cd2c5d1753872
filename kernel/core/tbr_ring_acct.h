/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_ring_acct.h - how full a ring was over time: the share of time it was
 * full, the share it was empty, and its mean occupancy, from the moments its
 * level (entries in use) changes. OS-independent like the rest of core/:
 * the caller passes the time (ns, monotonic) and serializes the calls per
 * ring (link/: link->lock). The cost of a change is two shifts, a multiply
 * and a few adds: no division, which only tbr_ring_acct_read() does.
 *
 * The link layer keeps one for each rail's TX ring, level = frames reserved
 * or posted (full: no credit left, the sender stalls; empty: nothing to
 * send), and one for its RX ring, level = buffers not posted to the backend
 * (handed up and not yet given back, or parked because the backend took
 * none: full = nothing left to receive into, the receiver stalls; empty =
 * every buffer waiting for data, nothing arriving).
 */
#ifndef TBR_RING_ACCT_H
#define TBR_RING_ACCT_H

#include "tbr_os.h"

/* time is summed in units of 2^TBR_RING_ACCT_SHIFT ns: a 4096-entry ring full for 2 years fits */
#define TBR_RING_ACCT_SHIFT	4

struct tbr_ring_acct {
	u64 since;		/* accounting started (ns) */
	u64 last;		/* the level's last change (ns) */
	u32 depth;		/* entries of the ring, > 0 */
	u32 level;		/* entries in use since @last, 0..depth */
	u64 area;		/* sum of level x time, entry-units */
	u64 full;		/* time at level == depth, units */
	u64 empty;		/* time at level == 0, units */
};

/* Figures in parts per million of the time since accounting started (0 when none passed). */
struct tbr_ring_occ {
	u64 elapsed_ns;
	u32 full_ppm;		/* share of time full */
	u32 empty_ppm;		/* share of time empty */
	u32 mean_ppm;		/* mean level, of depth */
};

static inline void tbr_ring_acct_init(struct tbr_ring_acct *a, u32 depth, u32 level, u64 now)
{
	memset(a, 0, sizeof(*a));
	a->since = now;
	a->last = now;
	a->depth = depth ? depth : 1;
	a->level = level;
}

/* Account the time since the last change at the current level. */
static inline void tbr_ring_acct_advance(struct tbr_ring_acct *a, u64 now)
{
	u64 dt;

	if (now <= a->last)
		return;		/* clocks of two CPUs a little apart */
	dt = (now >> TBR_RING_ACCT_SHIFT) - (a->last >> TBR_RING_ACCT_SHIFT);
	a->last = now;
	a->area += dt * a->level;
	if (a->level >= a->depth)
		a->full += dt;
	else if (!a->level)
		a->empty += dt;
}

/* The level changes to @level at @now. */
static inline void tbr_ring_acct_set(struct tbr_ring_acct *a, u32 level, u64 now)
{
	tbr_ring_acct_advance(a, now);
	a->level = level;
}

static inline u32 tbr_ring_acct_ppm(u64 part, u64 whole)
{
	if (!whole)
		return 0;
	/* part <= whole: divide first when the product could overflow */
	if (part > U64_MAX / 1000000)
		return (u32)(part / (whole / 1000000 ? whole / 1000000 : 1));
	return (u32)(part * 1000000 / whole);
}

/* The figures up to @now; @a is not changed. */
static inline void tbr_ring_acct_read(const struct tbr_ring_acct *a, u64 now,
				      struct tbr_ring_occ *o)
{
	struct tbr_ring_acct t = *a;
	u64 whole;

	tbr_ring_acct_advance(&t, now);
	whole = (t.last >> TBR_RING_ACCT_SHIFT) - (t.since >> TBR_RING_ACCT_SHIFT);
	o->elapsed_ns = t.last - t.since;
	o->full_ppm = tbr_ring_acct_ppm(t.full, whole);
	o->empty_ppm = tbr_ring_acct_ppm(t.empty, whole);
	o->mean_ppm = tbr_ring_acct_ppm(t.area / t.depth, whole);
}

#endif /* TBR_RING_ACCT_H */
