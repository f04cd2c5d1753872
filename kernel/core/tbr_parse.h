/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_parse.h - the body of tbr_frame_parse(), for the core's receive path
 * (tbr_tqp_rx_full() in tbr_tqp.c, inlined: no call per frame) and tbr_wire.c's
 * tbr_frame_parse() (everyone else: unit tests, fuzzers, UD demux). One
 * parser, two ways in. Context: any; pure function of its input.
 */
#ifndef TBR_PARSE_H
#define TBR_PARSE_H

#include "tbr_wire.h"

/* tbr_frame_parse() zeroes the header in a part of 64 bytes and the rest */
_Static_assert(sizeof(struct tbr_hdr) > 64, "struct tbr_hdr: 64 + rest");

static __always_inline int tbr_frame_parse_inl(const void *buf, u32 len,
					       struct tbr_hdr *h)
{
	const u8 *p = buf;
	const u8 *e;
	u32 hl;

	/*
	 * Zeroed in two parts of at most 64 bytes: the compiler writes each
	 * with a few wide stores, where one memset of the whole struct became
	 * a string instruction (~23 instructions per frame).
	 */
	memset(h, 0, 64);
	memset((u8 *)h + 64, 0, sizeof(*h) - 64);
	if (len < TBR_BASE_HDR_LEN || len > TBR_FRAME_MAX)
		return -EINVAL;
	h->version = p[0];
	h->opcode = p[1];
	h->flags = p[2];
	if (h->version != TBR_WIRE_VERSION)
		return -EINVAL;
	hl = tbr_hdr_len(h->opcode);
	if (!hl)
		return -EINVAL;
	/* unknown flags, or a piggybacked ACK: its epsn ends the header */
	if (h->flags & (~TBR_F_ALL | TBR_F_ACK)) {
		if ((h->flags & ~TBR_F_ALL) || !tbr_op_takes_ack(h->opcode))
			return -EINVAL;
		hl += TBR_PB_ACK_LEN;
		if (len < hl)
			return -EINVAL;
		h->epsn = tbr_get_be32(p + hl - TBR_PB_ACK_LEN);
		if (h->epsn & ~TBR_PSN_MASK)
			return -EINVAL;
	}
	h->conn_id = tbr_get_be16(p + 4);
	h->paylen = tbr_get_be16(p + 6);
	h->dqpn = tbr_get_be32(p + 8);
	h->psn = tbr_get_be32(p + 12) & TBR_PSN_MASK;
	h->npkey = (u16)~tbr_get_pkey(p);
	if (h->dqpn & ~TBR_QPN_MASK)
		return -EINVAL;
	if (len != hl + (u32)h->paylen)
		return -EINVAL;
	h->hdr_len = hl;
	h->payload = p + hl;
	e = p + TBR_BASE_HDR_LEN;

	switch (h->opcode) {
	case TBR_OP_SEND:
	case TBR_OP_SEND_IMM:
	case TBR_OP_SEND_INV:
		h->msn = tbr_get_be32(e);
		h->offset = tbr_get_be32(e + 4);
		h->msg_len = tbr_get_be32(e + 8);
		h->rmsn = tbr_get_be32(e + 12);
		h->imm = tbr_get_be32(e + 16);
		break;
	case TBR_OP_WRITE_IMM:
		h->rmsn = tbr_get_be32(e + 24);
		h->imm = tbr_get_be32(e + 28);
		fallthrough;
	case TBR_OP_WRITE:
	case TBR_OP_READ_REQ:
		if (h->opcode == TBR_OP_READ_REQ)
			h->req_len = tbr_get_be32(e + 24);
		h->msn = tbr_get_be32(e);
		h->offset = tbr_get_be32(e + 4);
		h->msg_len = tbr_get_be32(e + 8);
		h->rkey = tbr_get_be32(e + 12);
		h->va = tbr_get_be64(e + 16);
		break;
	case TBR_OP_READ_RESP:
		h->msn = tbr_get_be32(e);
		h->offset = tbr_get_be32(e + 4);
		break;
	case TBR_OP_CMP_SWAP:
	case TBR_OP_FETCH_ADD:
		h->msn = tbr_get_be32(e);
		h->rkey = tbr_get_be32(e + 4);
		h->va = tbr_get_be64(e + 8);
		h->swap_add = tbr_get_be64(e + 16);
		h->compare = tbr_get_be64(e + 24);
		break;
	case TBR_OP_ATOMIC_RESP:
		h->msn = tbr_get_be32(e);
		h->orig = tbr_get_be64(e + 4);
		break;
	case TBR_OP_ACK:
		h->syndrome = e[0];
		h->nwords = e[1];
		h->epsn = tbr_get_be32(e + 4);
		h->aux = tbr_get_be32(e + 8);
		if (h->syndrome > TBR_SYN_MAX || e[2] || e[3] ||
		    h->nwords > TBR_ACK_MAX_WORDS ||
		    h->paylen != 8u * h->nwords ||
		    (h->epsn & ~TBR_PSN_MASK))
			return -EINVAL;
		break;
	case TBR_OP_UD_SEND:
	case TBR_OP_UD_SEND_IMM:
		h->qkey = tbr_get_be32(e);
		h->src_qpn = tbr_get_be32(e + 4);
		h->imm = tbr_get_be32(e + 8);
		if (h->src_qpn & ~TBR_QPN_MASK)
			return -EINVAL;
		break;
	}
	return 0;
}

#endif /* TBR_PARSE_H */
