/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tests/fuzz/fuzz_input.h: a cursor over a fuzzer's input, for the script-driven targets */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct in {
	const uint8_t *p;
	size_t n;
};

/* copies the next n bytes to dst and advances; -1 (nothing taken) when fewer are left */
static inline int take(struct in *in, void *dst, size_t n)
{
	if (in->n < n)
		return -1;
	memcpy(dst, in->p, n);
	in->p += n;
	in->n -= n;
	return 0;
}

#endif
