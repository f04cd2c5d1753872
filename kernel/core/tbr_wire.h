/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_wire.h - tbrdma transport frame format (see docs/protocol.md).
 *
 * A frame is at most TBR_FRAME_MAX (4144) bytes: a page of payload
 * (TBR_MTU_MAX, 4096) behind the largest header (TBR_HDR_MAX). A rail may
 * carry less (the Thunderbolt NHI's ring frame is 4096 bytes): a link's
 * frame size, the smallest of its rails', sets the payload per frame of its
 * connections (docs/protocol.md section 2). Every frame starts with the 16-byte base header, followed by an
 * opcode-specific extension header and the payload. All multi-byte fields
 * are big-endian. Frames are encoded and decoded field by field through the
 * helpers below; no C struct is ever overlaid on wire bytes.
 *
 * Base header (16 bytes):
 *   0  version   u8   TBR_WIRE_VERSION
 *   1  opcode    u8   enum tbr_op
 *   2  flags     u8   TBR_F_*
 *   3  pkey_hi   u8   P_Key high byte, inverted (tbr_pkey.h)
 *   4  conn_id   be16 peer/connection id chosen by the receiver's demux
 *   6  paylen    be16 payload bytes after the headers (ACK: bitmap bytes)
 *   8  dqpn      be32 destination QP number (24 bits, top byte 0)
 *  12  psn       be32 packet sequence number (24 bits); its top byte is
 *                     the P_Key low byte, inverted
 */
#ifndef TBR_WIRE_H
#define TBR_WIRE_H

#include "tbr_os.h"
#include "tbr_pkey.h"

#define TBR_WIRE_VERSION	1
#define TBR_BASE_HDR_LEN	16
#define TBR_HDR_MAX		48
/* Largest payload of a data frame: one page. */
#define TBR_MTU_MAX		4096
/* Largest frame: every data header fits in TBR_HDR_MAX. */
#define TBR_FRAME_MAX		(TBR_MTU_MAX + TBR_HDR_MAX)
#define TBR_MTU_MIN		64

#define TBR_PSN_BITS		24
#define TBR_PSN_MASK		0xffffffu
#define TBR_QPN_MASK		0xffffffu
/* UD: destination QPN of a multicast datagram (every attached QP) */
#define TBR_QPN_MCAST		0xffffffu

/* Largest message length (IBTA: 2^31). */
#define TBR_MSG_MAX		0x80000000u

/* ACK bitmap: at most this many 64-bit words (4096 PSNs). */
#define TBR_ACK_MAX_WORDS	64

enum tbr_op {
	TBR_OP_SEND		= 0x01,
	TBR_OP_SEND_IMM		= 0x02,
	TBR_OP_SEND_INV		= 0x03,
	TBR_OP_WRITE		= 0x04,
	TBR_OP_WRITE_IMM	= 0x05,
	TBR_OP_READ_REQ		= 0x06,
	TBR_OP_READ_RESP	= 0x07,
	TBR_OP_CMP_SWAP		= 0x08,
	TBR_OP_FETCH_ADD	= 0x09,
	TBR_OP_ATOMIC_RESP	= 0x0a,
	TBR_OP_ACK		= 0x0b,
	TBR_OP_UD_SEND		= 0x0c,
	TBR_OP_UD_SEND_IMM	= 0x0d,
	TBR_OP_MAX		= 0x0d,
};

/* Base header flags. */
#define TBR_F_ACKREQ		0x01	/* responder: acknowledge now */
#define TBR_F_SOLICITED		0x02	/* SEND*: solicited event */
#define TBR_F_RETRANS		0x04	/* retransmitted copy (informational) */
/* WRITE*: place only after every earlier PSN (follows a READ/ATOMIC) */
#define TBR_F_ORDERED		0x08
/*
 * SEND*, WRITE: a cumulative ACK of the other direction rides along
 * (TBR_PB_ACK_LEN bytes after the extension); only to a peer that said it
 * takes them
 */
#define TBR_F_ACK		0x10
#define TBR_F_ALL		0x1f

/*
 * The piggybacked ACK behind the extension header of a TBR_F_ACK frame:
 * be32 epsn, the sender's next expected PSN (24 bits) as its responder,
 * i.e. an ACK (syndrome TBR_SYN_ACK, no bitmap, aux 0) for the QP the frame
 * is sent to. It fits TBR_HDR_MAX behind every opcode tbr_op_takes_ack()
 * accepts.
 */
#define TBR_PB_ACK_LEN		4

/* ACK syndromes (ACK extension byte 0). */
enum tbr_syndrome {
	TBR_SYN_ACK		= 0,
	TBR_SYN_RNR_NAK		= 1,
	TBR_SYN_NAK_INV_REQ	= 2,
	TBR_SYN_NAK_REM_ACCESS	= 3,
	TBR_SYN_NAK_REM_OP	= 4,
	TBR_SYN_MAX		= 4,
};

/*
 * ACK (syndrome TBR_SYN_ACK) aux field: 0, or TBR_ACK_DSACK | psn when the
 * ACK answers a duplicate of PSN psn (the sender's retransmission was not
 * needed). Receivers that do not know it ignore it.
 */
#define TBR_ACK_DSACK		0x80000000u

/* Extension header lengths. */
#define TBR_EXT_SEND_LEN	20	/* msn off len rmsn imm */
#define TBR_EXT_WRITE_LEN	24	/* msn off len rkey va */
#define TBR_EXT_WRITE_IMM_LEN	32	/* msn off len rkey va rmsn imm */
#define TBR_EXT_READ_REQ_LEN	28	/* msn off len rkey va req_len */
#define TBR_EXT_READ_RESP_LEN	8	/* msn off */
#define TBR_EXT_ATOMIC_LEN	32	/* msn rkey va swap_add compare */
#define TBR_EXT_ATOMIC_RESP_LEN	12	/* msn orig */
#define TBR_EXT_ACK_LEN		12	/* syn nwords rsvd epsn aux */
#define TBR_EXT_UD_LEN		12	/* qkey src_qpn imm */
/* UD payload: the address block ahead of the data (protocol.md 5.1) */
#define TBR_UD_ADDR_LEN		40

/*
 * Decoded header. Only the fields that belong to the opcode are meaningful;
 * tbr_frame_parse() zeroes the rest.
 */
struct tbr_hdr {
	u8 version;
	u8 opcode;
	u8 flags;
	u16 conn_id;
	u16 paylen;
	u32 dqpn;
	u32 psn;
	u16 npkey;	/* the sender's P_Key inverted, as on the wire: a
			 * zeroed header carries the default P_Key 0xffff
			 * (tbr_hdr_pkey() gives the P_Key)
			 */

	u32 msn;	/* message sequence number (per QP, per direction) */
	u32 offset;	/* byte offset of the payload in the message */
	u32 msg_len;	/* total message length */
	u32 req_len;	/* READ_REQ: bytes requested from offset */
	u32 rmsn;	/* receive sequence number (receive-consuming msgs) */
	u32 imm;	/* immediate data, or rkey to invalidate (SEND_INV) */
	u32 rkey;
	u64 va;
	u64 swap_add;	/* CMP_SWAP: swap value; FETCH_ADD: addend */
	u64 compare;
	u64 orig;	/* ATOMIC_RESP: value before the atomic */
	u32 qkey;	/* UD */
	u32 src_qpn;	/* UD */
	u8 syndrome;	/* ACK */
	u8 nwords;	/* ACK: bitmap words */
	u32 epsn;	/* ACK, or a TBR_F_ACK frame's piggybacked ACK:
			 * the sender's next expected PSN
			 */
	u32 aux;	/* ACK: RNR NAK wait in microseconds */

	u32 hdr_len;		/* base + extension bytes */
	const u8 *payload;	/* paylen bytes (ACK: the bitmap) */
};

static inline u16 tbr_hdr_pkey(const struct tbr_hdr *h)
{
	return (u16)~h->npkey;
}

/* Extension header length of each opcode (tbr_wire.c). */
extern const u8 tbr_ext_len[TBR_OP_MAX + 1];

/* Length of base + extension header of @op, 0 for an unknown opcode. */
static inline u32 tbr_hdr_len(u8 op)
{
	if (op == 0 || op > TBR_OP_MAX)
		return 0;
	return TBR_BASE_HDR_LEN + tbr_ext_len[op];
}

/* Opcodes that may carry a piggybacked ACK (TBR_F_ACK). */
static inline bool tbr_op_takes_ack(u8 op)
{
	return op == TBR_OP_SEND || op == TBR_OP_SEND_IMM ||
	       op == TBR_OP_SEND_INV || op == TBR_OP_WRITE;
}

/*
 * Parse and bounds-check a received frame.
 * Returns 0, or -EINVAL for a frame that is truncated, too long, of an
 * unknown version/opcode, has reserved bits set, or whose length fields
 * disagree with @len. On success @h->payload points into @buf.
 * Context: any. Pure function of its input.
 */
int tbr_frame_parse(const void *buf, u32 len, struct tbr_hdr *h);

/*
 * Encode the base and extension header of @h (opcode, flags, conn_id,
 * paylen, dqpn, psn, npkey and the opcode's extension fields) into @buf, which
 * must hold TBR_HDR_MAX bytes; the piggybacked ACK (h->epsn) of a TBR_F_ACK
 * frame follows the extension (opcodes tbr_op_takes_ack() only). Returns
 * the header length; the caller writes paylen payload bytes right after
 * it. Version and reserved fields are filled in here.
 */
u32 tbr_hdr_build(void *buf, const struct tbr_hdr *h);

/*
 * The base header and the extension of a SEND, SEND_IMM, SEND_INV, WRITE or
 * WRITE_IMM frame, field by field: what tbr_hdr_build() writes for them (it
 * uses these), for the requester's data frames without a struct tbr_hdr.
 * The extension helper returns the header length.
 */
static inline void tbr_put_base(u8 *p, u8 op, u8 flags, u16 conn_id,
				u16 paylen, u32 dqpn, u32 psn, u16 pkey)
{
	p[0] = TBR_WIRE_VERSION;
	p[1] = op;
	p[2] = flags;
	tbr_put_be16(conn_id, p + 4);
	tbr_put_be16(paylen, p + 6);
	tbr_put_be32(dqpn & TBR_QPN_MASK, p + 8);
	tbr_put_be32(psn & TBR_PSN_MASK, p + 12);
	tbr_put_pkey(p, pkey);
}

static inline u32 tbr_put_data_ext(u8 *p, u8 op, u32 msn, u32 offset,
				   u32 msg_len, u32 rmsn, u32 imm, u32 rkey,
				   u64 va)
{
	u8 *e = p + TBR_BASE_HDR_LEN;

	tbr_put_be32(msn, e);
	tbr_put_be32(offset, e + 4);
	tbr_put_be32(msg_len, e + 8);
	if (op != TBR_OP_WRITE && op != TBR_OP_WRITE_IMM) {
		tbr_put_be32(rmsn, e + 12);
		tbr_put_be32(imm, e + 16);
		return TBR_BASE_HDR_LEN + TBR_EXT_SEND_LEN;
	}
	tbr_put_be32(rkey, e + 12);
	tbr_put_be64(va, e + 16);
	if (op == TBR_OP_WRITE)
		return TBR_BASE_HDR_LEN + TBR_EXT_WRITE_LEN;
	tbr_put_be32(rmsn, e + 24);
	tbr_put_be32(imm, e + 28);
	return TBR_BASE_HDR_LEN + TBR_EXT_WRITE_IMM_LEN;
}

/* ACK bitmap word @i (bit b covers PSN epsn + 64 * i + b). */
static inline u64 tbr_ack_word(const struct tbr_hdr *h, u32 i)
{
	return tbr_get_be64(h->payload + 8 * i);
}

static inline u32 tbr_psn_add(u32 psn, u32 n)
{
	return (psn + n) & TBR_PSN_MASK;
}

/* Signed distance a - b in 24-bit PSN space, in (-2^23, 2^23]. */
static inline s32 tbr_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

#endif /* TBR_WIRE_H */
