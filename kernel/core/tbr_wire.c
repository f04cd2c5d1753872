// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_wire.c - encode and decode tbrdma frame headers.
 * Context: any; no state. See tbr_wire.h and docs/protocol.md.
 */
#include "tbr_parse.h"

const u8 tbr_ext_len[TBR_OP_MAX + 1] = {
	[TBR_OP_SEND]		= TBR_EXT_SEND_LEN,
	[TBR_OP_SEND_IMM]	= TBR_EXT_SEND_LEN,
	[TBR_OP_SEND_INV]	= TBR_EXT_SEND_LEN,
	[TBR_OP_WRITE]		= TBR_EXT_WRITE_LEN,
	[TBR_OP_WRITE_IMM]	= TBR_EXT_WRITE_IMM_LEN,
	[TBR_OP_READ_REQ]	= TBR_EXT_READ_REQ_LEN,
	[TBR_OP_READ_RESP]	= TBR_EXT_READ_RESP_LEN,
	[TBR_OP_CMP_SWAP]	= TBR_EXT_ATOMIC_LEN,
	[TBR_OP_FETCH_ADD]	= TBR_EXT_ATOMIC_LEN,
	[TBR_OP_ATOMIC_RESP]	= TBR_EXT_ATOMIC_RESP_LEN,
	[TBR_OP_ACK]		= TBR_EXT_ACK_LEN,
	[TBR_OP_UD_SEND]	= TBR_EXT_UD_LEN,
	[TBR_OP_UD_SEND_IMM]	= TBR_EXT_UD_LEN,
};

int tbr_frame_parse(const void *buf, u32 len, struct tbr_hdr *h)
{
	return tbr_frame_parse_inl(buf, len, h);
}

u32 tbr_hdr_build(void *buf, const struct tbr_hdr *h)
{
	u8 *p = buf;
	u8 *e = p + TBR_BASE_HDR_LEN;
	u32 hl;

	tbr_put_base(p, h->opcode, h->flags, h->conn_id, h->paylen, h->dqpn,
		     h->psn, (u16)~h->npkey);

	switch (h->opcode) {
	case TBR_OP_SEND:
	case TBR_OP_SEND_IMM:
	case TBR_OP_SEND_INV:
	case TBR_OP_WRITE:
	case TBR_OP_WRITE_IMM:
		hl = tbr_put_data_ext(p, h->opcode, h->msn, h->offset,
				      h->msg_len, h->rmsn, h->imm, h->rkey,
				      h->va);
		if ((h->flags & TBR_F_ACK) && tbr_op_takes_ack(h->opcode)) {
			tbr_put_be32(h->epsn & TBR_PSN_MASK, p + hl);
			hl += TBR_PB_ACK_LEN;
		}
		return hl;
	case TBR_OP_READ_REQ:
		tbr_put_be32(h->req_len, e + 24);
		tbr_put_be32(h->msn, e);
		tbr_put_be32(h->offset, e + 4);
		tbr_put_be32(h->msg_len, e + 8);
		tbr_put_be32(h->rkey, e + 12);
		tbr_put_be64(h->va, e + 16);
		break;
	case TBR_OP_READ_RESP:
		tbr_put_be32(h->msn, e);
		tbr_put_be32(h->offset, e + 4);
		break;
	case TBR_OP_CMP_SWAP:
	case TBR_OP_FETCH_ADD:
		tbr_put_be32(h->msn, e);
		tbr_put_be32(h->rkey, e + 4);
		tbr_put_be64(h->va, e + 8);
		tbr_put_be64(h->swap_add, e + 16);
		tbr_put_be64(h->compare, e + 24);
		break;
	case TBR_OP_ATOMIC_RESP:
		tbr_put_be32(h->msn, e);
		tbr_put_be64(h->orig, e + 4);
		break;
	case TBR_OP_ACK:
		e[0] = h->syndrome;
		e[1] = h->nwords;
		e[2] = 0;
		e[3] = 0;
		tbr_put_be32(h->epsn & TBR_PSN_MASK, e + 4);
		tbr_put_be32(h->aux, e + 8);
		break;
	case TBR_OP_UD_SEND:
	case TBR_OP_UD_SEND_IMM:
		tbr_put_be32(h->qkey, e);
		tbr_put_be32(h->src_qpn & TBR_QPN_MASK, e + 4);
		tbr_put_be32(h->imm, e + 8);
		break;
	}
	return tbr_hdr_len(h->opcode);
}
