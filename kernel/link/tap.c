// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the capture tap (link.h struct tbr_link_tap, docs/capture.md).
 * tx.c calls tbr_tap_post() and link.c tbr_tap_rx() only while
 * tbr_link_tap_key is on, at the two points every rail frame passes once:
 * its post on the TX ring (tx.c tbr_frame_send_locked, link->lock held) and
 * its dispatch after reception (link.c tbr_rx_dispatch, "bh"). Out of line:
 * the hot path keeps a patched-out jump.
 */
#include <linux/jump_label.h>
#include <linux/rcupdate.h>

#include "tbrdma.h"
#include "link/rail.h"

DEFINE_STATIC_KEY_FALSE(tbr_link_tap_key);

void tbr_link_tap_set(struct tbr_dev *tdev, struct tbr_link_tap *tap)
{
	if (tap) {
		rcu_assign_pointer(tdev->rails.tap, tap);
		static_branch_inc(&tbr_link_tap_key);
		return;
	}
	if (!rcu_access_pointer(tdev->rails.tap))
		return;
	RCU_INIT_POINTER(tdev->rails.tap, NULL);
	static_branch_dec(&tbr_link_tap_key);
	synchronize_rcu();	/* the bh readers (rx) included */
}

/*
 * link->lock held: post @f (code @pdf, @len bytes) on @rail, its copy to
 * the tap taken before (once posted, the backend may own the page).
 */
noinline int tbr_tap_post(struct tbr_rail *rail, struct tbr_frame *f,
				 u8 pdf, u32 len)
{
	struct tbr_link_tap *tap;
	void *cookie = NULL;
	int err;

	rcu_read_lock();
	tap = rcu_dereference(rail->link->tdev->rails.tap);
	if (tap)
		cookie = tap->tx(tap, rail, pdf, f->buf, len);
	err = rail->ops->tx(rail, f);
	if (cookie)
		tap->tx_done(tap, cookie, !err);
	rcu_read_unlock();
	return err;
}

noinline void tbr_tap_rx(struct tbr_rail *rail, u8 pdf, const void *buf,
				u32 len)
{
	struct tbr_link_tap *tap;

	rcu_read_lock();
	tap = rcu_dereference(rail->link->tdev->rails.tap);
	if (tap)
		tap->rx(tap, rail, pdf, buf, len);
	rcu_read_unlock();
}
