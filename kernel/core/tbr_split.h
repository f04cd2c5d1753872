/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_split.h - split frames on a Thunderbolt ring (docs/protocol.md 1.4):
 * the receiver's pairing of a head and its tail, OS independent so the
 * host unit tests and a fuzzer (tests/fuzz/fuzz_split.c) run it too.
 *
 * A frame longer than the ring frame R goes as two ring frames back to back
 * on one ring: a head, the frame's first size - R bytes (at most
 * TBR_SPLIT_HEADROOM), with EOF PDF TBR_SPLIT_PDF_HEAD | the frame's own
 * code, then a tail, the other R bytes, with EOF PDF TBR_SPLIT_PDF_TAIL. The
 * receiver feeds every ring frame, in ring order, to tbr_split_rx(), which
 * says what to do with it. Only the EOF PDF counts: the NHI reports the PDF
 * of a frame's last transport packet and 0 as its SOF (docs/thunderbolt.md).
 */
#ifndef TBR_SPLIT_H
#define TBR_SPLIT_H

#include "tbr_os.h"

#define TBR_SPLIT_PDF_TAIL	5
#define TBR_SPLIT_PDF_HEAD	0x8	/* | the frame's PDF (1..7) */
#define TBR_SPLIT_HEADROOM	64	/* largest head a receiver takes */

/* One RX ring's state: the head waiting for its tail, if any. */
struct tbr_split_rx {
	void *held;		/* the caller's buffer of the head, or NULL */
	u32 head_len;
	u8 head_pdf;
};

enum tbr_split_act {
	TBR_SPLIT_DELIVER,	/* a frame of its own: up with its PDF */
	TBR_SPLIT_HOLD,		/* a head: keep the buffer (now st->held) */
	TBR_SPLIT_JOIN,		/* a tail: out->head's head_len bytes go in
				 * front of it; up with out->pdf
				 */
	TBR_SPLIT_DISCARD,	/* unusable (a lone tail, a bad head): back
				 * to the ring, counted in out->errors
				 */
	TBR_SPLIT_BAD,		/* the ring reported it damaged: back to the
				 * ring as such
				 */
};

struct tbr_split_out {
	void *drop;		/* a held head to give back (in out->errors) */
	void *head;		/* JOIN: the head's buffer, given back after the copy */
	u32 head_len;		/* JOIN */
	u8 pdf;			/* DELIVER, JOIN: the frame's PDF */
	u32 errors;		/* ring frames dropped, for rx_errors */
};

/*
 * Ring frame @buf of @size bytes with EOF PDF @eof (@bad: CRC error or
 * overrun reported by the ring). Pure function of its input and @st.
 * Context: any; the caller serialises the calls of one ring.
 */
enum tbr_split_act tbr_split_rx(struct tbr_split_rx *st, void *buf, u8 eof,
				 u32 size, bool bad, struct tbr_split_out *out);

#endif /* TBR_SPLIT_H */
