/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: between link.c and route.c (the forwarding of routed frames,
 * docs/protocol.md 7). Nothing else includes this.
 */
#ifndef TBRDMA_LINK_ROUTE_H
#define TBRDMA_LINK_ROUTE_H

#include "link/link.h"

/* link.c, for route.c */
/* the observers' rx (tbrN, genl) for a frame with code @pdf. Context "bh". */
void tbr_notify_rx(struct tbr_rail *rail, u8 pdf, const void *data, u32 len);
/*
 * Send @len bytes from @buf, the start of a frame tbr_link_tx_alloc()
 * reserved on a rail link, with frame code @pdf; abort it instead. Context
 * "any".
 */
void tbr_link_tx_send_pdf(void *buf, u8 pdf, u32 len);
void tbr_link_tx_abort_buf(void *buf);

/* route.c, for link.c */
/*
 * A frame with code TBR_PDF_ROUTED arrived on @rail (counted received):
 * deliver it, forward it (the hop limit is decremented in @buf) or drop it,
 * counted on the rail's link. Context "bh".
 */
void tbr_route_rx(struct tbr_rail *rail, void *buf, u32 len);
/* TX descriptors came free on rail link @link: wake routed links over it. */
void tbr_route_tx_ready(struct tbr_link *link);
/* The routed link to @guid, with a reference, or NULL. Context "any". */
struct tbr_link *tbr_route_link_get(struct tbr_dev *tdev, u64 guid);

#endif /* TBRDMA_LINK_ROUTE_H */
