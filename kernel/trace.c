// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the tracepoints' definitions (tbr_trace.h, docs/tracing.md) and
 * the link layer observer that traces rails and links going up and down.
 * The other events are emitted where they happen: verbs/qp.c (QP states),
 * xport/xport.c (what the transport core counted), backends/tb.c (the
 * negotiation), link/route.c (forwarding table changes).
 */
#include "tbrdma.h"
#include "link/rail.h"

#define CREATE_TRACE_POINTS
#include "tbr_trace.h"

/* Context "process", tbr_ctl_mutex held (the observer contract, link.h). */
static void tbr_trace_rail_event(struct tbr_rail *rail, enum tbr_obs_event ev)
{
	struct tbr_link *link = rail->link;
	const char *dev = tbr_dev_name(link->tdev);
	u32 up = READ_ONCE(link->rails_up);

	if (ev == TBR_OBS_UP)
		trace_tbr_rail_up(dev, link->id, rail->id, rail->backend->kind,
				  link->peer_guid, up);
	else if (ev == TBR_OBS_DOWN)
		trace_tbr_rail_down(dev, link->id, rail->id, rail->backend->kind,
				    link->peer_guid, up);
}

static void tbr_trace_link_event(struct tbr_link *link, enum tbr_obs_event ev)
{
	if (ev == TBR_OBS_UP)
		trace_tbr_link_up(tbr_dev_name(link->tdev), link->id, link->peer_guid);
	else if (ev == TBR_OBS_DOWN)
		trace_tbr_link_down(tbr_dev_name(link->tdev), link->id, link->peer_guid);
}

struct tbr_link_observer tbr_trace_observer = {
	.rail_event = tbr_trace_rail_event,
	.link_event = tbr_trace_link_event,
};
