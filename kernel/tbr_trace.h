/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma tracepoints (system "tbrdma", docs/tracing.md): QP state changes,
 * retransmissions, timeouts and RNR NAKs, rails and links going up and down,
 * the Thunderbolt negotiation's outcomes and forwarding table changes.
 *
 * The transport core (core/) includes no kernel header: it counts what
 * happens (struct tbr_tqp_counters) and the glue that calls it (xport/)
 * turns the counts into events. Rails and links are traced by an observer
 * of the link layer (trace.c), so link/link.c names no tracepoint.
 *
 * Every event carries the device's name; strings are copied into fixed
 * arrays (no __assign_str, whose arguments differ between 6.1 and 6.12).
 * Only trace.c defines CREATE_TRACE_POINTS.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tbrdma

#if !defined(TBR_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define TBR_TRACE_H

#include <linux/tracepoint.h>
#include <linux/string.h>

#define TBR_TRACE_NAME	32	/* device names: tbrdma0, tbrdma12, ... */
#define TBR_TRACE_KIND	8	/* backend kinds: emu, eth, tb */

/* A QP's state changed: modify_qp, or the transport moved it to ERR. */
TRACE_EVENT(tbr_qp_state,
	TP_PROTO(const char *dev, u32 qpn, int old, int new),
	TP_ARGS(dev, qpn, old, new),
	TP_STRUCT__entry(
		__array(char, dev, TBR_TRACE_NAME)
		__field(u32, qpn)
		__field(int, old)
		__field(int, new)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, TBR_TRACE_NAME);
		__entry->qpn = qpn;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("%s qpn %u %s -> %s", __entry->dev, __entry->qpn,
		  __print_symbolic(__entry->old, { 0, "RESET" }, { 1, "INIT" },
				   { 2, "RTR" }, { 3, "RTS" }, { 4, "SQD" },
				   { 5, "SQE" }, { 6, "ERR" }),
		  __print_symbolic(__entry->new, { 0, "RESET" }, { 1, "INIT" },
				   { 2, "RTR" }, { 3, "RTS" }, { 4, "SQD" },
				   { 5, "SQE" }, { 6, "ERR" }))
);

/*
 * A count of a QP's transport grew by @n (the change since its previous
 * event of this kind), @total so far: frames sent again (all reasons), of
 * them on SACK holes (fast), retransmit timer expiries, RNR NAKs sent (no
 * receive WQE posted here), RNR NAKs received (none at the peer).
 */
DECLARE_EVENT_CLASS(tbr_qp_count_class,
	TP_PROTO(const char *dev, u32 qpn, u64 peer, u64 n, u64 total),
	TP_ARGS(dev, qpn, peer, n, total),
	TP_STRUCT__entry(
		__array(char, dev, TBR_TRACE_NAME)
		__field(u32, qpn)
		__field(u64, peer)
		__field(u64, n)
		__field(u64, total)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, TBR_TRACE_NAME);
		__entry->qpn = qpn;
		__entry->peer = peer;
		__entry->n = n;
		__entry->total = total;
	),
	TP_printk("%s qpn %u peer %016llx n %llu total %llu",
		  __entry->dev, __entry->qpn, __entry->peer, __entry->n,
		  __entry->total)
);

DEFINE_EVENT(tbr_qp_count_class, tbr_qp_retransmit,
	TP_PROTO(const char *dev, u32 qpn, u64 peer, u64 n, u64 total),
	TP_ARGS(dev, qpn, peer, n, total));
DEFINE_EVENT(tbr_qp_count_class, tbr_qp_fast_retransmit,
	TP_PROTO(const char *dev, u32 qpn, u64 peer, u64 n, u64 total),
	TP_ARGS(dev, qpn, peer, n, total));
DEFINE_EVENT(tbr_qp_count_class, tbr_qp_timeout,
	TP_PROTO(const char *dev, u32 qpn, u64 peer, u64 n, u64 total),
	TP_ARGS(dev, qpn, peer, n, total));
DEFINE_EVENT(tbr_qp_count_class, tbr_qp_rnr_sent,
	TP_PROTO(const char *dev, u32 qpn, u64 peer, u64 n, u64 total),
	TP_ARGS(dev, qpn, peer, n, total));
DEFINE_EVENT(tbr_qp_count_class, tbr_qp_rnr_rcvd,
	TP_PROTO(const char *dev, u32 qpn, u64 peer, u64 n, u64 total),
	TP_ARGS(dev, qpn, peer, n, total));

DECLARE_EVENT_CLASS(tbr_rail_class,
	TP_PROTO(const char *dev, u32 link, u32 rail, const char *kind, u64 peer,
		 u32 rails_up),
	TP_ARGS(dev, link, rail, kind, peer, rails_up),
	TP_STRUCT__entry(
		__array(char, dev, TBR_TRACE_NAME)
		__array(char, kind, TBR_TRACE_KIND)
		__field(u32, link)
		__field(u32, rail)
		__field(u64, peer)
		__field(u32, rails_up)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, TBR_TRACE_NAME);
		strscpy(__entry->kind, kind, TBR_TRACE_KIND);
		__entry->link = link;
		__entry->rail = rail;
		__entry->peer = peer;
		__entry->rails_up = rails_up;
	),
	TP_printk("%s link %u rail %u (%s) peer %016llx rails_up %u",
		  __entry->dev, __entry->link, __entry->rail, __entry->kind,
		  __entry->peer, __entry->rails_up)
);

/* A rail came up (the scheduler may use it) or went down; context process. */
DEFINE_EVENT(tbr_rail_class, tbr_rail_up,
	TP_PROTO(const char *dev, u32 link, u32 rail, const char *kind, u64 peer,
		 u32 rails_up),
	TP_ARGS(dev, link, rail, kind, peer, rails_up));
DEFINE_EVENT(tbr_rail_class, tbr_rail_down,
	TP_PROTO(const char *dev, u32 link, u32 rail, const char *kind, u64 peer,
		 u32 rails_up),
	TP_ARGS(dev, link, rail, kind, peer, rails_up));

DECLARE_EVENT_CLASS(tbr_link_class,
	TP_PROTO(const char *dev, u32 link, u64 peer),
	TP_ARGS(dev, link, peer),
	TP_STRUCT__entry(
		__array(char, dev, TBR_TRACE_NAME)
		__field(u32, link)
		__field(u64, peer)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, TBR_TRACE_NAME);
		__entry->link = link;
		__entry->peer = peer;
	),
	TP_printk("%s link %u peer %016llx", __entry->dev, __entry->link,
		  __entry->peer)
);

/* A link's first rail came up, its last went down. */
DEFINE_EVENT(tbr_link_class, tbr_link_up,
	TP_PROTO(const char *dev, u32 link, u64 peer), TP_ARGS(dev, link, peer));
DEFINE_EVENT(tbr_link_class, tbr_link_down,
	TP_PROTO(const char *dev, u32 link, u64 peer), TP_ARGS(dev, link, peer));

/*
 * A step of the Thunderbolt negotiation (backends/tb.c) ended: @step is
 * "hello" (our HELLO answered), "agree" (both HELLOs in, rails set up) or
 * "ready" (our READY answered); @result 0 on success, else a negative errno
 * or the peer's TBR_NEGO_ST_* status; @rails the rails agreed/ready.
 */
TRACE_EVENT(tbr_nego,
	TP_PROTO(const char *dev, const char *xd, u64 peer, const char *step,
		 int result, u32 rails),
	TP_ARGS(dev, xd, peer, step, result, rails),
	TP_STRUCT__entry(
		__array(char, dev, TBR_TRACE_NAME)
		__array(char, xd, TBR_TRACE_NAME)
		__array(char, step, TBR_TRACE_KIND)
		__field(u64, peer)
		__field(int, result)
		__field(u32, rails)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, TBR_TRACE_NAME);
		strscpy(__entry->xd, xd, TBR_TRACE_NAME);
		strscpy(__entry->step, step, TBR_TRACE_KIND);
		__entry->peer = peer;
		__entry->result = result;
		__entry->rails = rails;
	),
	TP_printk("%s %s peer %016llx %s %s (%d) rails %u", __entry->dev,
		  __entry->xd, __entry->peer, __entry->step,
		  __entry->result ? "failed" : "ok", __entry->result,
		  __entry->rails)
);

/*
 * A destination's forwarding entry changed (ROUTE_SET, table @version):
 * @via the next hop's GUID and @hops, 0/0 when it left the table; the old
 * values in @old_via, @old_hops (0/0: new destination).
 */
TRACE_EVENT(tbr_route,
	TP_PROTO(const char *dev, u32 version, u64 dst, u64 via, u32 hops,
		 u64 old_via, u32 old_hops),
	TP_ARGS(dev, version, dst, via, hops, old_via, old_hops),
	TP_STRUCT__entry(
		__array(char, dev, TBR_TRACE_NAME)
		__field(u32, version)
		__field(u64, dst)
		__field(u64, via)
		__field(u32, hops)
		__field(u64, old_via)
		__field(u32, old_hops)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev, TBR_TRACE_NAME);
		__entry->version = version;
		__entry->dst = dst;
		__entry->via = via;
		__entry->hops = hops;
		__entry->old_via = old_via;
		__entry->old_hops = old_hops;
	),
	TP_printk("%s v%u dst %016llx via %016llx hops %u (was %016llx hops %u)",
		  __entry->dev, __entry->version, __entry->dst, __entry->via,
		  __entry->hops, __entry->old_via, __entry->old_hops)
);

#endif /* TBR_TRACE_H */

/* out of tree: found through Kbuild's -I$(src) */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tbr_trace
#include <trace/define_trace.h>
