// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: rail frames rewritten as RoCE v2 packets (docs/capture.md), for
 * the capture monitor. Transport frames (kernel/core/tbr_wire.h) become
 * Ethernet / IPv6 (IPv4 for a UD datagram between IPv4-mapped GIDs) / UDP
 * 4791 / BTH and the extension headers the IB opcode has, with the frame's
 * QPN, PSN, P_Key, flags and payload, then a zero ICRC. A frame of a
 * multi-frame message becomes FIRST, MIDDLE or LAST by its offset in the
 * message. Pure functions of their input: context "any".
 */
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/ip6_checksum.h>

#include "core/tbr_netx_wire.h"
#include "core/tbr_wire.h"
#include "link/link.h"
#include "obs/roce.h"

/* IBTA opcodes (RC: 0x00 + op, UD: 0x60 + op) */
enum {
	IBO_SEND_FIRST = 0x00, IBO_SEND_MIDDLE, IBO_SEND_LAST, IBO_SEND_LAST_IMM,
	IBO_SEND_ONLY, IBO_SEND_ONLY_IMM, IBO_WRITE_FIRST, IBO_WRITE_MIDDLE,
	IBO_WRITE_LAST, IBO_WRITE_LAST_IMM, IBO_WRITE_ONLY, IBO_WRITE_ONLY_IMM,
	IBO_READ_REQ, IBO_READ_RESP_FIRST, IBO_READ_RESP_MIDDLE,
	IBO_READ_RESP_LAST, IBO_READ_RESP_ONLY, IBO_ACK, IBO_ATOMIC_ACK,
	IBO_CMP_SWAP, IBO_FETCH_ADD,
	IBO_SEND_LAST_INV = 0x16, IBO_SEND_ONLY_INV = 0x17,
	IBO_UD_SEND_ONLY = 0x64, IBO_UD_SEND_ONLY_IMM = 0x65,
};

#define IB_BTH_LEN	12

/* First, Middle, Last, Only of the multi-frame opcodes */
enum { POS_FIRST, POS_MIDDLE, POS_LAST, POS_ONLY };
static const u8 tbr_cap_pos_op[TBR_OP_READ_RESP + 1][4] = {
	[TBR_OP_SEND] = { IBO_SEND_FIRST, IBO_SEND_MIDDLE, IBO_SEND_LAST, IBO_SEND_ONLY },
	[TBR_OP_SEND_IMM] = { IBO_SEND_FIRST, IBO_SEND_MIDDLE, IBO_SEND_LAST_IMM,
			      IBO_SEND_ONLY_IMM },
	[TBR_OP_SEND_INV] = { IBO_SEND_FIRST, IBO_SEND_MIDDLE, IBO_SEND_LAST_INV,
			      IBO_SEND_ONLY_INV },
	[TBR_OP_WRITE] = { IBO_WRITE_FIRST, IBO_WRITE_MIDDLE, IBO_WRITE_LAST, IBO_WRITE_ONLY },
	[TBR_OP_WRITE_IMM] = { IBO_WRITE_FIRST, IBO_WRITE_MIDDLE, IBO_WRITE_LAST_IMM,
			       IBO_WRITE_ONLY_IMM },
	[TBR_OP_READ_RESP] = { IBO_READ_RESP_FIRST, IBO_READ_RESP_MIDDLE, IBO_READ_RESP_LAST,
			       IBO_READ_RESP_ONLY },
};

/* The IB opcode of @h. */
static u8 tbr_cap_opcode(const struct tbr_hdr *h)
{
	bool first = h->offset == 0;
	bool last = (u64)h->offset + h->paylen >= h->msg_len;

	switch (h->opcode) {
	case TBR_OP_READ_RESP:
		/* no total length on the wire: a full-MTU frame is not the last */
		last = !(h->paylen >= 256 && is_power_of_2(h->paylen));
		fallthrough;
	case TBR_OP_SEND ... TBR_OP_WRITE_IMM:
		return tbr_cap_pos_op[h->opcode][first ? (last ? POS_ONLY : POS_FIRST) :
						 (last ? POS_LAST : POS_MIDDLE)];
	case TBR_OP_READ_REQ:
		return IBO_READ_REQ;
	case TBR_OP_CMP_SWAP:
		return IBO_CMP_SWAP;
	case TBR_OP_FETCH_ADD:
		return IBO_FETCH_ADD;
	case TBR_OP_ATOMIC_RESP:
		return IBO_ATOMIC_ACK;
	case TBR_OP_ACK:
		return IBO_ACK;
	case TBR_OP_UD_SEND:
		return IBO_UD_SEND_ONLY;
	default:
		return IBO_UD_SEND_ONLY_IMM;
	}
}

static u8 *tbr_cap_put32(u8 *p, u32 v)
{
	put_unaligned_be32(v, p);
	return p + 4;
}

static u8 *tbr_cap_put64(u8 *p, u64 v)
{
	put_unaligned_be64(v, p);
	return p + 8;
}

/* AETH: syndrome (ACK 0x1f: no credit count; RNR 0x20; NAK 0x60 | code), MSN */
static u8 *tbr_cap_aeth(u8 *p, const struct tbr_hdr *h)
{
	static const u8 syn[TBR_SYN_MAX + 1] = {
		[TBR_SYN_ACK] = 0x1f, [TBR_SYN_RNR_NAK] = 0x20,
		[TBR_SYN_NAK_INV_REQ] = 0x61, [TBR_SYN_NAK_REM_ACCESS] = 0x62,
		[TBR_SYN_NAK_REM_OP] = 0x63,
	};
	u8 s = h->opcode == TBR_OP_ACK ? syn[min_t(u8, h->syndrome, TBR_SYN_MAX)] : 0x1f;

	return tbr_cap_put32(p, (u32)s << 24 | (h->msn & TBR_PSN_MASK));
}

/* The extension headers of IB opcode @op; returns their end. */
static u8 *tbr_cap_ext(u8 *p, u8 op, const struct tbr_hdr *h)
{
	switch (op) {
	case IBO_WRITE_FIRST:
	case IBO_WRITE_ONLY:
	case IBO_WRITE_ONLY_IMM:	/* RETH */
		p = tbr_cap_put64(p, h->va);
		p = tbr_cap_put32(p, h->rkey);
		p = tbr_cap_put32(p, h->msg_len);
		break;
	case IBO_READ_REQ:
		p = tbr_cap_put64(p, h->va + h->offset);
		p = tbr_cap_put32(p, h->rkey);
		p = tbr_cap_put32(p, h->req_len);
		break;
	case IBO_READ_RESP_FIRST:
	case IBO_READ_RESP_LAST:
	case IBO_READ_RESP_ONLY:
	case IBO_ACK:
		p = tbr_cap_aeth(p, h);
		break;
	case IBO_ATOMIC_ACK:
		p = tbr_cap_aeth(p, h);
		p = tbr_cap_put64(p, h->orig);
		break;
	case IBO_CMP_SWAP:
	case IBO_FETCH_ADD:		/* AtomicETH */
		p = tbr_cap_put64(p, h->va);
		p = tbr_cap_put32(p, h->rkey);
		p = tbr_cap_put64(p, h->swap_add);
		p = tbr_cap_put64(p, h->compare);
		break;
	case IBO_UD_SEND_ONLY:
	case IBO_UD_SEND_ONLY_IMM:	/* DETH */
		p = tbr_cap_put32(p, h->qkey);
		p = tbr_cap_put32(p, h->src_qpn & TBR_QPN_MASK);
		break;
	}
	switch (op) {
	case IBO_SEND_LAST_IMM:
	case IBO_SEND_ONLY_IMM:
	case IBO_WRITE_LAST_IMM:
	case IBO_WRITE_ONLY_IMM:
	case IBO_UD_SEND_ONLY_IMM:	/* ImmDt */
	case IBO_SEND_LAST_INV:
	case IBO_SEND_ONLY_INV:		/* IETH: the rkey, in imm */
		p = tbr_cap_put32(p, h->imm);
		break;
	}
	return p;
}

static u8 *tbr_cap_eth(u8 *p, const u8 *dst, const u8 *src, u16 type)
{
	memcpy(p, dst, ETH_ALEN);
	memcpy(p + ETH_ALEN, src, ETH_ALEN);
	put_unaligned_be16(type, p + 2 * ETH_ALEN);
	return p + ETH_HLEN;
}

/* fe80::/64 with the modified EUI-64 of @mac: GID index 0 of its tbrN */
static void tbr_cap_ll(struct in6_addr *a, const u8 *mac)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[0] = 0xfe;
	a->s6_addr[1] = 0x80;
	a->s6_addr[8] = mac[0] ^ 0x02;
	a->s6_addr[9] = mac[1];
	a->s6_addr[10] = mac[2];
	a->s6_addr[11] = 0xff;
	a->s6_addr[12] = 0xfe;
	memcpy(&a->s6_addr[13], mac + 3, 3);
}

/* a frame shown as it is, behind a 4-byte tag: code, rail, direction, 0 */
static u32 tbr_cap_raw(u8 *out, const struct tbr_cap_ends *e, u32 rail,
		       bool tx, u8 pdf, const u8 *buf, u32 len)
{
	u8 *p = tbr_cap_eth(out, e->dst_mac, e->src_mac, TBR_CAP_ETH_P_RAW);

	p[0] = pdf;
	p[1] = rail;
	p[2] = tx;
	p[3] = 0;
	memcpy(p + 4, buf, len);
	return p + 4 + len - out;
}

u32 tbr_cap_rewrite(u8 *out, const struct tbr_cap_ends *e, u32 rail, bool tx,
		    u8 pdf, const u8 *buf, u32 len)
{
	const u8 *data, *gids = NULL;
	struct in6_addr src, dst;
	u32 dlen, ulen, pad, psn;
	struct tbr_hdr h;
	u8 *p, *ip, *udp;
	bool v4, re;
	u8 op;

	if (pdf == TBR_PDF_NET && len >= ETH_HLEN) {
		memcpy(out, buf, len);	/* tbrN's own Ethernet frame */
		return len;
	}
	if (pdf == TBR_PDF_NETX && len >= TBR_NETX_HDR_LEN + ETH_HLEN &&
	    buf[0] == TBR_NETX_VERSION && buf[3] == 1) {
		/* a tbrN packet in one fragment: its Ethernet frame (more: raw) */
		memcpy(out, buf + TBR_NETX_HDR_LEN, len - TBR_NETX_HDR_LEN);
		return len - TBR_NETX_HDR_LEN;
	}
	if (pdf != TBR_PDF_DATA || tbr_frame_parse(buf, len, &h))
		return tbr_cap_raw(out, e, rail, tx, pdf, buf, len);
	op = tbr_cap_opcode(&h);
	/* on an ACK the flag means another thing (protocol.md 1.1) */
	re = (h.flags & TBR_F_RETRANS) && h.opcode != TBR_OP_ACK;
	data = h.payload;
	dlen = h.opcode == TBR_OP_ACK ? 0 : h.paylen;	/* no SACK bitmap */
	if (op >= IBO_UD_SEND_ONLY && dlen >= TBR_UD_ADDR_LEN) {
		gids = data;	/* the address block: sgid, dgid (protocol.md 5.1) */
		data += TBR_UD_ADDR_LEN;
		dlen -= TBR_UD_ADDR_LEN;
	}
	v4 = gids && ipv6_addr_v4mapped((const struct in6_addr *)gids) &&
	     ipv6_addr_v4mapped((const struct in6_addr *)(gids + 16));
	p = tbr_cap_eth(out, e->dst_mac, e->src_mac, v4 ? ETH_P_IP : ETH_P_IPV6);
	ip = p;
	p += v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	udp = p;
	p += sizeof(struct udphdr);

	/* BTH */
	pad = -dlen & 3;
	psn = h.psn;
	if (h.opcode == TBR_OP_ACK && h.syndrome == TBR_SYN_ACK)
		psn = (h.psn - 1) & TBR_PSN_MASK;	/* IB names the last PSN */
	p[0] = op;
	p[1] = (h.flags & TBR_F_SOLICITED ? 0x80 : 0) | pad << 4;
	put_unaligned_be16(tbr_hdr_pkey(&h), p + 2);
	put_unaligned_be32(h.dqpn & TBR_QPN_MASK, p + 4);
	put_unaligned_be32((h.flags & TBR_F_ACKREQ ? 0x80000000u : 0) | psn, p + 8);
	p = tbr_cap_ext(p + IB_BTH_LEN, op, &h);
	memcpy(p, data, dlen);
	p += dlen;
	memset(p, 0, pad + 4);	/* pad, ICRC (not computed) */
	p += pad + 4;

	ulen = p - udp;
	put_unaligned_be16(TBR_CAP_SPORT_BASE | rail |
			   (re ? TBR_CAP_SPORT_RETRANS : 0), udp);
	put_unaligned_be16(TBR_CAP_UDP_DPORT, udp + 2);
	put_unaligned_be16(ulen, udp + 4);
	put_unaligned_be16(0, udp + 6);
	if (v4) {
		struct iphdr *iph = (struct iphdr *)ip;

		memset(iph, 0, sizeof(*iph));
		iph->version = 4;
		iph->ihl = 5;
		iph->tot_len = htons(ulen + sizeof(*iph));
		iph->id = htons(rail | (re ? 0x10 : 0));
		iph->frag_off = htons(IP_DF);
		iph->ttl = 64;
		iph->protocol = IPPROTO_UDP;
		memcpy(&iph->saddr, gids + 12, 4);
		memcpy(&iph->daddr, gids + 16 + 12, 4);
		iph->check = ip_fast_csum(iph, iph->ihl);
		return p - out;	/* RoCE v2 over IPv4: UDP checksum 0 */
	}
	if (gids) {
		memcpy(&src, gids, sizeof(src));
		memcpy(&dst, gids + 16, sizeof(dst));
	} else {
		tbr_cap_ll(&src, e->src_mac);
		tbr_cap_ll(&dst, e->dst_mac);
	}
	{
		struct ipv6hdr *ip6 = (struct ipv6hdr *)ip;
		__sum16 sum;

		memset(ip6, 0, sizeof(*ip6));
		ip6->version = 6;
		/* flow label: the rail, bit 4 a retransmission */
		ip6->flow_lbl[2] = rail | (re ? 0x10 : 0);
		ip6->payload_len = htons(ulen);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->saddr = src;
		ip6->daddr = dst;
		sum = csum_ipv6_magic(&src, &dst, ulen, IPPROTO_UDP,
				      csum_partial(udp, ulen, 0));
		put_unaligned((__force u16)(sum ? sum : CSUM_MANGLED_0),
			      (u16 *)(udp + 6));
	}
	return p - out;
}
