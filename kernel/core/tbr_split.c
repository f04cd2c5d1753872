// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbr_split.c - the receiver's pairing of split frames (tbr_split.h). A tail
 * joins only the head right before it on the ring: anything else between
 * them, a loss the ring reported or a head that is too long, and both go.
 */
#include "tbr_split.h"

/* The held head, if any, to be given back as an error. */
static void tbr_split_drop_held(struct tbr_split_rx *st, struct tbr_split_out *out)
{
	if (!st->held)
		return;
	out->drop = st->held;
	out->errors++;
	st->held = NULL;
}

enum tbr_split_act tbr_split_rx(struct tbr_split_rx *st, void *buf, u8 eof,
				 u32 size, bool bad, struct tbr_split_out *out)
{
	memset(out, 0, sizeof(*out));
	if (bad) {
		tbr_split_drop_held(st, out);
		return TBR_SPLIT_BAD;
	}
	if (eof & TBR_SPLIT_PDF_HEAD) {
		tbr_split_drop_held(st, out);
		if (!size || size > TBR_SPLIT_HEADROOM) {
			out->errors++;
			return TBR_SPLIT_DISCARD;
		}
		st->held = buf;
		st->head_len = size;
		st->head_pdf = eof & ~TBR_SPLIT_PDF_HEAD;
		return TBR_SPLIT_HOLD;
	}
	if (eof != TBR_SPLIT_PDF_TAIL) {
		tbr_split_drop_held(st, out);
		out->pdf = eof;
		return TBR_SPLIT_DELIVER;
	}
	if (!st->held) {
		tbr_split_drop_held(st, out);
		out->errors++;
		return TBR_SPLIT_DISCARD;
	}
	out->head = st->held;
	out->head_len = st->head_len;
	out->pdf = st->head_pdf;
	st->held = NULL;
	return TBR_SPLIT_JOIN;
}
