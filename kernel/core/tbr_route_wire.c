// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_route_wire.c - the routing header codec, the forwarding decision and
 * the forwarding table's checks and lookup (tbr_route_wire.h,
 * docs/protocol.md 7).
 */
#include "tbr_route_wire.h"

int tbr_route_hdr_parse(const u8 *buf, u32 len, struct tbr_route_hdr *h)
{
	if (len <= TBR_ROUTE_HDR_LEN)
		return -EINVAL;
	h->version = buf[0];
	h->pdf = buf[1];
	h->hop_limit = buf[2];
	h->flags = buf[3];
	h->dst = tbr_get_be64(buf + 8);
	h->src = tbr_get_be64(buf + 16);
	if (h->version != TBR_ROUTE_VERSION || h->flags || tbr_get_be32(buf + 4))
		return -EINVAL;
	if (h->pdf < TBR_ROUTE_INNER_DATA || h->pdf > TBR_ROUTE_INNER_NET)
		return -EINVAL;
	if (!h->dst || !h->src || h->dst == h->src)
		return -EINVAL;
	return 0;
}

void tbr_route_hdr_build(u8 *buf, const struct tbr_route_hdr *h)
{
	buf[0] = h->version;
	buf[1] = h->pdf;
	buf[2] = h->hop_limit;
	buf[3] = h->flags;
	tbr_put_be32(0, buf + 4);
	tbr_put_be64(h->dst, buf + 8);
	tbr_put_be64(h->src, buf + 16);
}

enum tbr_route_verdict tbr_route_decide(const struct tbr_route_hdr *h, u64 self)
{
	if (h->src == self)
		return TBR_ROUTE_DROP_LOOP;
	if (!h->hop_limit || h->hop_limit > TBR_ROUTE_HOPS_MAX)
		return TBR_ROUTE_DROP_HOPS;
	if (h->dst == self)
		return TBR_ROUTE_LOCAL;
	if (h->hop_limit == 1)
		return TBR_ROUTE_DROP_HOPS;
	return TBR_ROUTE_FORWARD;
}

void tbr_route_hop_dec(u8 *buf)
{
	if (buf[2])
		buf[2]--;
}

int tbr_route_table_check(const struct tbr_route_entry *e, u32 n, u64 self)
{
	u32 i;

	if (n > TBR_ROUTE_TABLE_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!e[i].dst || e[i].dst == self || !e[i].next_hop ||
		    e[i].next_hop == self)
			return -EINVAL;
		if (!e[i].hops || e[i].hops > TBR_ROUTE_HOPS_MAX ||
		    (e[i].hops == 1) != (e[i].next_hop == e[i].dst))
			return -EINVAL;
		if (i && e[i].dst <= e[i - 1].dst)
			return -EINVAL;
	}
	return 0;
}

const struct tbr_route_entry *tbr_route_table_find(const struct tbr_route_entry *e,
						   u32 n, u64 dst)
{
	u32 lo = 0, hi = n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (e[mid].dst == dst)
			return &e[mid];
		if (e[mid].dst < dst)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool tbr_route_rpf(const struct tbr_route_entry *e, u32 n, u64 src, u64 from)
{
	const struct tbr_route_entry *r;

	if (!src || !from)
		return false;
	if (src == from)
		return true;
	r = tbr_route_table_find(e, n, src);
	return r && r->next_hop == from;
}
