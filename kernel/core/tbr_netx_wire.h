/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: the fragment frames of tbrN (frame code TBR_PDF_NETX), wire format
 * (docs/protocol.md 10). verbs/netx.c speaks it, obs/roce.c shows it.
 */
#ifndef TBRDMA_CORE_NETX_WIRE_H
#define TBRDMA_CORE_NETX_WIRE_H

#include <linux/types.h>

/*
 * Wire format: the header of every TBR_PDF_NETX frame, then the bytes
 * [frag * frag_size, + payload) of one Ethernet frame of @len bytes
 * (big endian, no padding). Every fragment carries the whole header, so
 * whichever arrives first sets the packet up.
 */
#define TBR_NETX_VERSION	1
#define TBR_NETX_F_CSUM		0x01	/* bytes csum_start.. to be summed into
					 * csum_start + csum_offset (as
					 * CHECKSUM_PARTIAL): not computed yet
					 */
#define TBR_NETX_GSO_TCPV4	1	/* gso_type: a TCP super packet, to be */
#define TBR_NETX_GSO_TCPV6	2	/* cut into gso_size segments if it is */
#define TBR_NETX_GSO_ECN	0x80	/* forwarded (| ECN: CWR on the first) */

struct tbr_netx_hdr {
	u8 version;		/* TBR_NETX_VERSION; others: dropped */
	u8 flags;		/* TBR_NETX_F_* */
	u8 frag;		/* this fragment, 0 .. nfrags - 1 */
	u8 nfrags;		/* 1 .. TBR_NETX_FRAGS_MAX */
	__be32 seq;		/* the packet's number on this link */
	__be32 len;		/* the whole Ethernet frame */
	__be16 frag_size;	/* payload of every fragment but the last */
	__be16 csum_start;	/* from the Ethernet header (F_CSUM) */
	__be16 csum_offset;
	__be16 gso_size;	/* 0: not a super packet */
	u8 gso_type;		/* TBR_NETX_GSO_* */
	u8 rsvd[3];		/* 0 */
} __packed;

#define TBR_NETX_HDR_LEN	24

#endif /* TBRDMA_CORE_NETX_WIRE_H */
