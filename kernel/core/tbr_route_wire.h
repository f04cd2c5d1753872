/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_route_wire.h - routed frames (multi-hop fabric, docs/protocol.md 7),
 * OS independent: the routing header, the forwarding decision and the
 * forwarding table's checks, so the same code runs in tbrdma.ko
 * (link/route.c) and in the host tests (tests/unit/test_route.c) and the
 * fuzzer (tests/fuzz/fuzz_route.c).
 *
 * A frame for a host that is not a direct neighbour travels with the rail
 * frame code TBR_ROUTE_PDF (4): a 24-byte routing header (big endian) and
 * then the original frame (DATA, MGMT or NET) unchanged. Frames between
 * neighbours keep their own codes and carry no routing header.
 */
#ifndef TBR_ROUTE_WIRE_H
#define TBR_ROUTE_WIRE_H

#include "tbr_os.h"

#define TBR_ROUTE_PDF		4	/* rail frame code of a routed frame */
#define TBR_ROUTE_VERSION	1
#define TBR_ROUTE_HDR_LEN	24
#define TBR_ROUTE_HOPS_MAX	16	/* hop limit a sender sets; longest route */
#define TBR_ROUTE_TABLE_MAX	1024	/* entries of one forwarding table */

/* the inner frame codes a routed frame may carry (link.h's TBR_PDF_*) */
#define TBR_ROUTE_INNER_DATA	1
#define TBR_ROUTE_INNER_MGMT	2
#define TBR_ROUTE_INNER_NET	3

struct tbr_route_hdr {
	u8 version;		/* TBR_ROUTE_VERSION */
	u8 pdf;			/* inner frame code: DATA, MGMT or NET */
	u8 hop_limit;		/* forwarders decrement; 0 is never valid */
	u8 flags;		/* 0 */
	u64 dst;		/* destination device GUID */
	u64 src;		/* originating device GUID */
};

/*
 * Parse the routing header of a routed frame of @len bytes at @buf. 0: @h
 * filled, version known, flags and reserved bytes zero, a known inner code,
 * nonzero and distinct GUIDs and at least one byte of inner frame; -EINVAL
 * otherwise (dropped, counted as a receive error).
 */
int tbr_route_hdr_parse(const u8 *buf, u32 len, struct tbr_route_hdr *h);
void tbr_route_hdr_build(u8 *buf, const struct tbr_route_hdr *h);

enum tbr_route_verdict {
	TBR_ROUTE_LOCAL,	/* for us: deliver the inner frame */
	TBR_ROUTE_FORWARD,	/* for another host: decrement, look up, send */
	TBR_ROUTE_DROP_HOPS,	/* hop limit 0, above TBR_ROUTE_HOPS_MAX, or 1
				 * and not for us
				 */
	TBR_ROUTE_DROP_LOOP,	/* our own frame came back (or a forged source) */
};

/*
 * What device @self does with a routed frame whose parsed header is @h. A
 * hop limit above TBR_ROUTE_HOPS_MAX (what every sender sets) is no frame
 * of this fabric: dropped, not clamped and carried round a loop. On
 * TBR_ROUTE_FORWARD the caller decrements the hop limit in the copy it
 * sends on (tbr_route_hop_dec), never in the received frame.
 */
enum tbr_route_verdict tbr_route_decide(const struct tbr_route_hdr *h, u64 self);
void tbr_route_hop_dec(u8 *buf);

/* One forwarding table entry: frames for @dst leave towards @next_hop. */
struct tbr_route_entry {
	u64 dst;
	u64 next_hop;		/* a neighbour's GUID (the link's peer) */
	u32 hops;		/* 1 (next_hop == dst) .. TBR_ROUTE_HOPS_MAX */
};

/*
 * A table of @n entries for device @self is valid when n <= TABLE_MAX,
 * the destinations are strictly ascending (so a lookup is a binary search
 * and no destination appears twice), none is 0 or @self, no next hop is 0
 * or @self, hops is within 1..HOPS_MAX and hops == 1 exactly when the next
 * hop is the destination. 0 or -EINVAL.
 */
int tbr_route_table_check(const struct tbr_route_entry *e, u32 n, u64 self);
/* The entry for @dst in a valid table, or NULL. */
const struct tbr_route_entry *tbr_route_table_find(const struct tbr_route_entry *e,
						   u32 n, u64 dst);

/*
 * The reverse-path check of a routed frame from @src that came in from the
 * neighbour @from (its link's peer GUID), against the valid table @e of @n
 * entries: true when @from is @src itself (a neighbour's own frame) or the
 * neighbour the table sends frames for @src to. Every other frame, and one
 * from a source the table does not know, is not from where @src is: a
 * neighbour cannot speak for a host it is not the way to. Exact for
 * symmetric routes (tbrdmad's: the path from a to b is the path from b to
 * a reversed, docs/sweep.md "Routes").
 */
bool tbr_route_rpf(const struct tbr_route_entry *e, u32 n, u64 src, u64 from);

#endif /* TBR_ROUTE_WIRE_H */
