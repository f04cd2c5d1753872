// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_split.c - libFuzzer target: tbr_split_rx() (kernel/core/tbr_split.c)
 * on a hostile peer's sequence of ring frames (4 bytes each: unused (the SOF
 * PDF, which the NHI reports as 0), EOF, size low byte and high bits, damaged). Properties: a tail joins only the head
 * of the ring frame right before it, and no more than TBR_SPLIT_HEADROOM of
 * it; nothing but a PDF-TAIL frame ever joins; every head held is given
 * back exactly once (dropped, joined, or still held at the end).
 */
#include <stdint.h>
#include <stdlib.h>
#include "tbr_split.h"

#define MAX_FRAMES	4096

static uint8_t held_state[MAX_FRAMES];	/* 1: held, 2: given back */

static void give_back(void *p, size_t n)
{
	size_t id;

	if (!p)
		return;
	id = (size_t)(uintptr_t)p - 1;
	if (id >= n || held_state[id] != 1)
		abort();
	held_state[id] = 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tbr_split_rx st = { 0 };
	struct tbr_split_out o;
	enum tbr_split_act a, prev = TBR_SPLIT_DELIVER;
	size_t n = size / 4, i;

	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	memset(held_state, 0, n);
	for (i = 0; i < n; i++) {
		const uint8_t *r = data + 4 * i;
		u8 eof = r[1] & 0xf;
		u32 len = r[2] | (u32)(r[3] & 0x1f) << 8;
		void *buf = (void *)(uintptr_t)(i + 1);

		a = tbr_split_rx(&st, buf, eof, len, r[3] & 0x80, &o);
		give_back(o.drop, n);
		if (o.errors > 2)
			abort();
		switch (a) {
		case TBR_SPLIT_HOLD:
			if (!(eof & TBR_SPLIT_PDF_HEAD) || !len ||
			    len > TBR_SPLIT_HEADROOM || st.held != buf)
				abort();
			held_state[i] = 1;
			break;
		case TBR_SPLIT_JOIN:
			if (eof != TBR_SPLIT_PDF_TAIL ||
			    prev != TBR_SPLIT_HOLD || o.head != (void *)(uintptr_t)i ||
			    !o.head_len || o.head_len > TBR_SPLIT_HEADROOM ||
			    o.pdf & TBR_SPLIT_PDF_HEAD || o.drop)
				abort();
			give_back(o.head, n);
			break;
		case TBR_SPLIT_DELIVER:
			if (eof == TBR_SPLIT_PDF_TAIL || (eof & TBR_SPLIT_PDF_HEAD) || o.pdf != eof)
				abort();
			break;
		case TBR_SPLIT_DISCARD:
			if (!o.errors)
				abort();
			break;
		case TBR_SPLIT_BAD:
			if (!(r[3] & 0x80))
				abort();
			break;
		default:
			abort();
		}
		if (a != TBR_SPLIT_HOLD && st.held)
			abort();
		prev = a;
	}
	give_back(st.held, n);
	for (i = 0; i < n; i++)
		if (held_state[i] == 1)
			abort();
	return 0;
}
