// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_route.c - libFuzzer target: routed frames (kernel/core/tbr_route_wire.c,
 * as kernel/link/route.c calls it). The input is one routed frame as it
 * arrives on a rail; its bytes are also read as a forwarding table (20-byte
 * entries: dst, next hop, hops u32). Checks, besides the sanitizers: an
 * accepted header has the version, a known inner code, zero flags and
 * reserved bytes, nonzero distinct GUIDs and an inner frame, and re-encodes
 * to the same bytes; the decision delivers only frames for us with a hop
 * limit of at most TBR_ROUTE_HOPS_MAX, forwards only frames for others with
 * a hop limit of 2..TBR_ROUTE_HOPS_MAX, never our own; an accepted table is
 * strictly ascending, without us, with hops in range and one-hop entries
 * exactly those to their next hop, its binary search finds what a linear
 * search finds, and the reverse-path check passes a source from a
 * neighbour exactly when the neighbour is the source or the table's next
 * hop to it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tbr_route_wire.h"

#define SELF	0x0123456789abcdefULL

static struct tbr_route_entry tab[TBR_ROUTE_TABLE_MAX + 1];

static void table_check(const uint8_t *data, size_t size)
{
	uint32_t n = 0, i, j;

	while (size >= 20 && n < TBR_ROUTE_TABLE_MAX + 1) {
		tab[n].dst = tbr_get_be64(data);
		tab[n].next_hop = tbr_get_be64(data + 8);
		tab[n].hops = tbr_get_be32(data + 16);
		n++;
		data += 20;
		size -= 20;
	}
	if (tbr_route_table_check(tab, n, SELF))
		return;
	if (n > TBR_ROUTE_TABLE_MAX)
		abort();
	for (i = 0; i < n; i++) {
		if (!tab[i].dst || tab[i].dst == SELF || !tab[i].next_hop ||
		    tab[i].next_hop == SELF || !tab[i].hops ||
		    tab[i].hops > TBR_ROUTE_HOPS_MAX ||
		    (tab[i].hops == 1) != (tab[i].dst == tab[i].next_hop) ||
		    (i && tab[i - 1].dst >= tab[i].dst))
			abort();
		if (tbr_route_table_find(tab, n, tab[i].dst) != &tab[i])
			abort();
		/* a GUID between two destinations is not found */
		if (i && tab[i].dst - tab[i - 1].dst > 1 &&
		    tbr_route_table_find(tab, n, tab[i].dst - 1))
			abort();
	}
	for (j = 0; j < 4; j++) {	/* GUIDs from the input, absent or not */
		uint64_t g = n ? tab[j % n].next_hop : 0;
		uint64_t from = n ? tab[(j + 1) % n].next_hop : 0;
		const struct tbr_route_entry *f = tbr_route_table_find(tab, n, g);
		bool rpf;

		for (i = 0; i < n && tab[i].dst != g; i++)
			;
		if (f != (i < n ? &tab[i] : NULL))
			abort();
		rpf = g && from && (g == from || (i < n && tab[i].next_hop == from));
		if (tbr_route_rpf(tab, n, g, from) != rpf)
			abort();
		if (n && !tbr_route_rpf(tab, n, tab[j % n].dst, tab[j % n].next_hop))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tbr_route_hdr h, h2;
	uint8_t buf[TBR_ROUTE_HDR_LEN];
	enum tbr_route_verdict v;

	memset(&h, 0, sizeof(h));	/* padding: compared with memcmp below */
	memset(&h2, 0, sizeof(h2));
	table_check(data, size);
	if (size > 4096 || tbr_route_hdr_parse(data, (uint32_t)size, &h))
		return 0;
	if (h.version != TBR_ROUTE_VERSION || h.pdf < 1 || h.pdf > 3 || h.flags ||
	    !h.dst || !h.src || h.dst == h.src || size <= TBR_ROUTE_HDR_LEN)
		abort();
	tbr_route_hdr_build(buf, &h);
	if (memcmp(buf, data, sizeof(buf)) ||
	    tbr_route_hdr_parse(data, (uint32_t)size, &h2) || memcmp(&h, &h2, sizeof(h)))
		abort();
	v = tbr_route_decide(&h, SELF);
	if ((v == TBR_ROUTE_LOCAL && (h.dst != SELF || !h.hop_limit || h.src == SELF)) ||
	    (v == TBR_ROUTE_FORWARD && (h.dst == SELF || h.hop_limit < 2 || h.src == SELF)) ||
	    ((v == TBR_ROUTE_LOCAL || v == TBR_ROUTE_FORWARD) &&
	     h.hop_limit > TBR_ROUTE_HOPS_MAX) ||
	    (h.src == SELF && v != TBR_ROUTE_DROP_LOOP))
		abort();
	memcpy(buf, data, sizeof(buf));
	tbr_route_hop_dec(buf);
	if (h.hop_limit && buf[2] != h.hop_limit - 1)
		abort();
	return 0;
}
