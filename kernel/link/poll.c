// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: busy-polling a link's receive paths (module parameter
 * busy_poll_us, xport/xport_poll.c; docs/architecture.md): the rails' poll
 * cookies and their backends' busy_poll, contract in link.h. Apart from
 * link.c (which it does not call) so that link.c stays one file's size.
 */
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/sched.h>

#include "tbrdma.h"
#include "link/rail.h"

struct tbr_poll_pass {
	bool (*end)(void *arg);
	void *arg;
	bool done;
};

/* busy_poll's end test when a link has several rails: one pass each */
static bool tbr_poll_one_pass(void *data)
{
	struct tbr_poll_pass *pass = data;

	pass->done = pass->end(pass->arg);
	return true;
}

bool tbr_link_busy_poll(struct tbr_link *link, int us, u64 *until,
			bool (*end)(void *arg), void *arg)
{
	const struct tbr_backend *bk[TBR_LINK_MAX_RAILS];
	struct tbr_poll_pass pass = { .end = end, .arg = arg };
	u32 cookie[TBR_LINK_MAX_RAILS];
	unsigned int i, n = 0, auto_us = 0;
	unsigned long flags;

	spin_lock_irqsave(&link->lock, flags);
	for (i = 0; i < TBR_LINK_MAX_RAILS; i++) {
		struct tbr_rail *r = link->rails[i];

		if (!r || !r->up || !r->ops->poll_cookie ||
		    !r->backend->busy_poll)
			continue;
		cookie[n] = r->ops->poll_cookie(r);
		if (!cookie[n])
			continue;
		bk[n] = r->backend;	/* static: outlives the rail */
		if (us < 0)
			auto_us = max(auto_us, bk[n]->busy_poll_auto_us);
		n++;
	}
	spin_unlock_irqrestore(&link->lock, flags);
	if (us < 0)
		us = auto_us;
	if (!n || !us)
		return false;
	*until = ktime_get_ns() + (u64)us * NSEC_PER_USEC;
	if (n == 1) {
		bk[0]->busy_poll(cookie[0], end, arg);
		return true;
	}
	while (!pass.done) {
		for (i = 0; i < n && !pass.done; i++)
			bk[i]->busy_poll(cookie[i], tbr_poll_one_pass, &pass);
		cond_resched();
	}
	return true;
}
