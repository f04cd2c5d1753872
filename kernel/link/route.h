/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: between link.c, tx.c and route.c (the forwarding of routed
 * frames, docs/protocol.md 7). Nothing else includes this.
 */
#ifndef TBRDMA_LINK_ROUTE_H
#define TBRDMA_LINK_ROUTE_H

#include "link/link.h"

/* link.c, for route.c */
/*
 * the observers' rx (tbrN, genl) for a frame with code @pdf from host @src
 * (the rail's peer, or a routed frame's source). Context "bh".
 */
void tbr_notify_rx(struct tbr_rail *rail, u64 src, u8 pdf, const void *data, u32 len);
/* tx.c, for route.c: give a frame tbr_link_tx_alloc() reserved back unsent. Context "any". */
void tbr_link_tx_abort_buf(void *buf);

/*
 * route.c, for link.c: the forwarding hooks, which tbr_route_init() sets
 * in the device's struct tbr_rails (router) before the device has a rail,
 * so link.c and tx.c call route.c through them and never by name.
 *  rx        a frame with code TBR_PDF_ROUTED arrived on @rail (counted
 *            received): deliver it, forward it (the hop limit is
 *            decremented in @buf) or drop it, counted on the rail's link.
 *            Context "bh".
 *  tx_ready  TX descriptors came free on rail link @link: wake routed
 *            links over it. Context "bh".
 *  link_get  the routed link to @guid, with a reference, or NULL. Context
 *            "any".
 */
struct tbr_link_router {
	void (*rx)(struct tbr_rail *rail, void *buf, u32 len);
	void (*tx_ready)(struct tbr_link *link);
	struct tbr_link *(*link_get)(struct tbr_dev *tdev, u64 guid);
};

#endif /* TBRDMA_LINK_ROUTE_H */
