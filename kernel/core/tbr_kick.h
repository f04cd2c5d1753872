/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_kick.h - how far the kernel goes on with a send queue on its own
 * (issue 46, "bounded work per doorbell"). OS-independent like the rest of
 * core/; the caller serializes the calls per QP (xport: qp->lock).
 *
 * One pass moves at most a budget of WQEs from the user's SQ ring into the
 * transport (xport: TBR_XPORT_KICK_BUDGET). A pass that stops on its budget
 * with more WQEs waiting asks tbr_kick_next() when to go on:
 *  - nothing waits: never (no continuation; the streak ends);
 *  - the first TBR_KICK_RUNS continuations since the last doorbell (or since
 *    a pass ended for another reason: the ring empty, the transport full):
 *    at once (xport: kick_work queued with no delay);
 *  - after that the user refills the ring as fast as the kernel empties it
 *    (a UD datagram with no route completes at once) and has not rung: the
 *    caller asks userspace for a doorbell, so its next post pays for the
 *    work in its own system call, and the continuation backs off: 1 tick,
 *    doubling up to 2^TBR_KICK_SHIFT_MAX ticks. WQEs posted without a
 *    doorbell still go out, at a rate refilling cannot raise.
 * A doorbell (tbr_kick_doorbell) starts a new streak. So the kernel's work
 * on behalf of a QP in workers is at most (TBR_KICK_RUNS + 1) budgets per
 * doorbell, plus one budget per backoff step, instead of re-queuing itself
 * for as long as the user keeps the ring full.
 */
#ifndef TBR_KICK_H
#define TBR_KICK_H

#include "tbr_os.h"

#define TBR_KICK_RUNS		4	/* continuations at once per doorbell */
#define TBR_KICK_SHIFT_MAX	4	/* backoff up to 16 ticks */
#define TBR_KICK_NONE		(-1)	/* tbr_kick_next: no continuation */

struct tbr_kick {
	u32 runs;		/* continuations in this streak (capped) */
	u64 requeues;		/* continuations queued at once, ever */
	u64 backoffs;		/* continuations delayed, ever */
};

/* A doorbell: the user made a system call for this QP; a new streak. */
static inline void tbr_kick_doorbell(struct tbr_kick *k)
{
	k->runs = 0;
}

/* A pass ended without running out of budget: the streak is over. */
static inline void tbr_kick_idle(struct tbr_kick *k)
{
	k->runs = 0;
}

/*
 * A pass ran out of budget; @more: WQEs are waiting. Returns TBR_KICK_NONE
 * (no continuation), 0 (at once) or the delay in ticks (> 0: the caller
 * also asks userspace for a doorbell).
 */
static inline int tbr_kick_next(struct tbr_kick *k, bool more)
{
	u32 shift;

	if (!more) {
		k->runs = 0;
		return TBR_KICK_NONE;
	}
	if (k->runs < TBR_KICK_RUNS) {
		k->runs++;
		k->requeues++;
		return 0;
	}
	shift = k->runs - TBR_KICK_RUNS;
	if (shift < TBR_KICK_SHIFT_MAX)
		k->runs++;
	else
		shift = TBR_KICK_SHIFT_MAX;
	k->backoffs++;
	return 1 << shift;
}

#endif /* TBR_KICK_H */
