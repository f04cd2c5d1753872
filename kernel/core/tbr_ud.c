// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_ud.c - the UD address block (docs/protocol.md 5.1), the RoCE v2
 * GRH a receiver builds from it, and the group a multicast datagram names. OS-independent: the kernel's UD receive
 * path, the unit tests and the fuzzers run this same code.
 *
 * Locking: none; tbr_ud_grh() is a pure function.
 */
#include "tbr_core.h"

/* RFC 1071 checksum of an IPv4 header of @len bytes (even) */
static u16 tbr_ip_csum(const u8 *p, u32 len)
{
	u32 sum = 0, i;

	for (i = 0; i < len; i += 2)
		sum += (u32)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

static bool tbr_gid_v4mapped(const u8 *gid)
{
	static const u8 prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};

	return !memcmp(gid, prefix, sizeof(prefix));
}

u32 tbr_ud_grh(const u8 *uda, u32 len, bool imm, u8 *grh)
{
	/* UDP + BTH + DETH (+ ImmDt) + data + ICRC, as on a RoCE v2 wire */
	u32 udp_len = 8 + 12 + 8 + (imm ? 4 : 0) + len + 4;
	u32 flow = ((u32)uda[33] << 16 | (u32)uda[34] << 8 | uda[35]) & 0xfffff;
	u8 *ip;

	memset(grh, 0, TBR_GRH_LEN);
	if (tbr_gid_v4mapped(uda) && tbr_gid_v4mapped(uda + 16)) {
		/* 20 zero bytes, then the IPv4 header */
		ip = grh + 20;
		ip[0] = 0x45;				/* version 4, ihl 5 */
		ip[1] = uda[36];			/* tos */
		tbr_put_be16(20 + udp_len, ip + 2);	/* total length */
		tbr_put_be16(0x4000, ip + 6);		/* DF */
		ip[8] = uda[37];			/* ttl */
		ip[9] = 17;				/* UDP */
		memcpy(ip + 12, uda + 12, 4);		/* saddr */
		memcpy(ip + 16, uda + 16 + 12, 4);	/* daddr */
		tbr_put_be16(tbr_ip_csum(ip, 20), ip + 10);
		return TBR_NET_IPV4;
	}
	tbr_put_be32(6u << 28 | (u32)uda[36] << 20 | flow, grh);
	tbr_put_be16(udp_len, grh + 4);			/* payload length */
	grh[6] = 17;					/* next header: UDP */
	grh[7] = uda[37];				/* hop limit */
	memcpy(grh + 8, uda, 32);			/* sgid, dgid */
	return TBR_NET_IPV6;
}

const u8 *tbr_ud_frame_dgid(const void *frame, u32 len)
{
	struct tbr_hdr h;

	if (tbr_frame_parse(frame, len, &h) ||
	    (h.opcode != TBR_OP_UD_SEND && h.opcode != TBR_OP_UD_SEND_IMM) ||
	    h.paylen < TBR_UD_ADDR_LEN)
		return NULL;
	return h.payload + 16;
}
