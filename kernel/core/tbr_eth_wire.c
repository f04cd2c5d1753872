// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_eth_wire.c - the eth rail backend's header and HELLO codec and the
 * checks a received frame meets before the backend looks at its peers, and
 * the reassembly of fragmented frames (tbr_eth_wire.h, docs/eth.md).
 */
#include "tbr_eth_wire.h"

int tbr_eth_hdr_parse(const u8 *buf, u32 len, struct tbr_eth_hdr *h)
{
	if (len < TBR_ETH_HDR_LEN)
		return -EINVAL;
	h->version = buf[0];
	h->type = buf[1];
	h->pdf = buf[2];
	h->flags = buf[3];
	h->len = tbr_get_be16(buf + 4);
	h->src = tbr_get_be64(buf + 8);
	h->dst = tbr_get_be64(buf + 16);
	if (h->version != TBR_ETH_VERSION || len - TBR_ETH_HDR_LEN < h->len)
		return -EINVAL;
	return 0;
}

void tbr_eth_hdr_build(u8 *buf, const struct tbr_eth_hdr *h)
{
	buf[0] = h->version;
	buf[1] = h->type;
	buf[2] = h->pdf;
	buf[3] = h->flags;
	tbr_put_be16(h->len, buf + 4);
	tbr_put_be16(0, buf + 6);
	tbr_put_be64(h->src, buf + 8);
	tbr_put_be64(h->dst, buf + 16);
}

int tbr_eth_hello_parse(const struct tbr_eth_hdr *h, const u8 *p, u32 plen,
			u64 self, u32 session, struct tbr_eth_hello *out)
{
	u32 v;

	if (h->type != TBR_ETH_HELLO || h->len < TBR_ETH_HELLO_LEN ||
	    plen < TBR_ETH_HELLO_LEN)
		return -EINVAL;
	if (!h->src || h->src == self || (h->dst && h->dst != self))
		return -EINVAL;
	out->session = tbr_get_be32(p);
	if (!out->session)
		return -EINVAL;
	out->peer_session = tbr_get_be32(p + 4);
	v = tbr_get_be16(p + 8);
	out->max_frame = v < TBR_ETH_FRAME_MAX ? v : TBR_ETH_FRAME_MAX;
	v = tbr_get_be16(p + 10);
	out->period_ms = v < TBR_ETH_PERIOD_MIN ? TBR_ETH_PERIOD_MIN :
			 v > TBR_ETH_PERIOD_MAX ? TBR_ETH_PERIOD_MAX : v;
	out->flags = p[12];
	out->bundle_max = tbr_get_be16(p + 14);
	out->unicast = h->dst != 0;
	out->hears_us = out->unicast && (out->flags & TBR_ETH_HEARS_YOU) &&
			out->peer_session == session;
	out->auth = h->len >= TBR_ETH_HELLO_AUTH_LEN &&
		    plen >= TBR_ETH_HELLO_AUTH_LEN;
	if (out->auth) {
		out->nonce = tbr_get_be64(p + 16);
		out->peer_nonce = tbr_get_be64(p + 24);
		out->auth_flags = tbr_get_be32(p + 32);
		memcpy(out->mac, p + TBR_ETH_HELLO_MAC_OFF, TBR_AUTH_MAC_LEN);
	} else {
		out->nonce = 0;
		out->peer_nonce = 0;
		out->auth_flags = 0;
	}
	return 0;
}

void tbr_eth_hello_build(u8 *buf, u32 session, u32 peer_session,
			 u32 max_frame, u32 period_ms, u32 bundle_max, u8 flags)
{
	tbr_put_be32(session, buf);
	tbr_put_be32(peer_session, buf + 4);
	tbr_put_be16((u16)max_frame, buf + 8);
	tbr_put_be16((u16)period_ms, buf + 10);
	buf[12] = flags;
	buf[13] = 0;
	tbr_put_be16((u16)bundle_max, buf + 14);
}

void tbr_eth_hello_auth_build(u8 *buf, u64 nonce, u64 peer_nonce, u32 flags)
{
	tbr_put_be64(nonce, buf + 16);
	tbr_put_be64(peer_nonce, buf + 24);
	tbr_put_be32(flags, buf + 32);
	tbr_put_be32(0, buf + 36);
	memset(buf + TBR_ETH_HELLO_MAC_OFF, 0, TBR_AUTH_MAC_LEN);
}

/* What the MAC covers (tbr_eth_wire.h). */
#define TBR_ETH_MAC_IN	(16 + 8 + 16 + TBR_ETH_HELLO_MAC_OFF)

static void tbr_eth_mac_input(u8 *buf, const u8 *smac, u64 src, u64 dst,
			      const u8 *p)
{
	memcpy(buf, TBR_ETH_MAC_LABEL, 16);
	memcpy(buf + 16, smac, 6);
	buf[22] = 0;
	buf[23] = 0;
	tbr_put_be64(src, buf + 24);
	tbr_put_be64(dst, buf + 32);
	memcpy(buf + 40, p, TBR_ETH_HELLO_MAC_OFF);
}

int tbr_eth_hello_sign(const struct tbr_auth *a, const u8 *smac, u64 src,
		       u64 dst, u8 *p)
{
	u8 buf[TBR_ETH_MAC_IN];

	tbr_eth_mac_input(buf, smac, src, dst, p);
	return tbr_auth_sign(a, buf, sizeof(buf), p + TBR_ETH_HELLO_MAC_OFF);
}

int tbr_eth_hello_verify(const struct tbr_auth *a, const u8 *smac,
			 const struct tbr_eth_hdr *h, const u8 *p, u32 plen,
			 const struct tbr_eth_hello *hello, u64 cur, u64 prev)
{
	u8 buf[TBR_ETH_MAC_IN];

	if (!hello->unicast || h->type != TBR_ETH_HELLO)
		return -EINVAL;
	if (!hello->auth || !(hello->auth_flags & TBR_ETH_AUTH_MAC) ||
	    plen < TBR_ETH_HELLO_AUTH_LEN)
		return -ENOKEY;
	if (!hello->peer_nonce ||
	    (hello->peer_nonce != cur && hello->peer_nonce != prev))
		return -ESTALE;
	tbr_eth_mac_input(buf, smac, h->src, h->dst, p);
	return tbr_auth_verify(a, buf, sizeof(buf), hello->mac);
}

int tbr_eth_frame_check(const struct tbr_eth_hdr *h, u64 self)
{
	if (h->type != TBR_ETH_FRAME || h->dst != self || !h->len ||
	    h->len > TBR_ETH_FRAME_MAX)
		return -EINVAL;
	return 0;
}

int tbr_eth_next_frame(const u8 *buf, u32 left, struct tbr_eth_hdr *h)
{
	if (left < TBR_ETH_HDR_LEN)
		return 1;
	if (tbr_eth_hdr_parse(buf, left, h) || h->type != TBR_ETH_FRAME)
		return -EINVAL;
	return 0;
}

int tbr_eth_frag_parse(const struct tbr_eth_hdr *h, const u8 *p, u32 plen,
		       u64 self, struct tbr_eth_frag *out)
{
	if (h->type != TBR_ETH_FRAG || h->dst != self ||
	    h->len <= TBR_ETH_FRAG_HDR_LEN || plen < h->len)
		return -EINVAL;
	out->id = tbr_get_be16(p);
	out->offset = tbr_get_be16(p + 2);
	out->total = tbr_get_be16(p + 4);
	out->pdf = h->pdf;
	out->len = h->len - TBR_ETH_FRAG_HDR_LEN;
	if (!out->total || out->total > TBR_ETH_FRAME_MAX ||
	    out->len > (u32)out->total - out->offset || out->offset >= out->total)
		return -EINVAL;
	return 0;
}

void tbr_eth_frag_build(u8 *buf, const struct tbr_eth_frag *fr)
{
	tbr_put_be16(fr->id, buf);
	tbr_put_be16(fr->offset, buf + 2);
	tbr_put_be16(fr->total, buf + 4);
	tbr_put_be16(0, buf + 6);
}

u32 tbr_eth_reasm_reset(struct tbr_eth_reasm *r)
{
	u32 was = r->busy;

	r->busy = false;
	return was;
}

int tbr_eth_reasm_add(struct tbr_eth_reasm *r, const struct tbr_eth_frag *fr,
		      const u8 *data, u32 *dropped)
{
	if (!fr->offset) {
		*dropped += tbr_eth_reasm_reset(r);
		r->busy = true;
		r->id = fr->id;
		r->total = fr->total;
		r->pdf = fr->pdf;
		r->have = 0;
	} else if (!r->busy || fr->id != r->id || fr->total != r->total ||
		   fr->pdf != r->pdf || fr->offset != r->have) {
		/* a gap or a piece of another frame: both go */
		*dropped += tbr_eth_reasm_reset(r) + 1;
		return -EINVAL;
	}
	memcpy(r->buf + r->have, data, fr->len);
	r->have += fr->len;
	if (r->have < r->total)
		return TBR_ETH_REASM_MORE;
	r->busy = false;
	return TBR_ETH_REASM_DONE;
}
