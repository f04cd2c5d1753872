// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_addrmap.c - libFuzzer target: tbrdmad's persisted state file loader,
 * the guid2addr map (addrmap_load / addrmap_parse), on arbitrary file
 * contents (the file lives under /var/lib and survives crashes, disk
 * corruption and hand edits).
 *
 * Each input goes through the in-memory parser; those it accepts, and one in
 * eight of the others (the syscalls are the slow part), also through the
 * file loader by way of a memfd (no temp file litter): both must agree. A map that
 * loads must have non-zero, unique GUIDs and addresses, and must survive
 * addrmap_format() + addrmap_parse() unchanged.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fabric.h"

static AddrMap a, b, c;
static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[128], why2[128];
	int r, r2;
	char *text;

	if (fd < 0) {
		fd = memfd_create("guid2addr", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	why[0] = why2[0] = '\0';
	r = addrmap_parse(&a, (const char *)data, size, why, sizeof(why));
	if (r && size && data[size - 1] % 8)
		return 0;
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	r2 = addrmap_load(&b, path, why2, sizeof(why2));
	if (r != r2 || strcmp(why, why2))
		abort();
	if (r) {
		if (!memchr(why, '\0', sizeof(why)) || !why[0])
			abort();	/* a rejected file is logged with its reason */
		return 0;
	}
	if (a.n != b.n || memcmp(a.e, b.e, a.n * sizeof(a.e[0])))
		abort();
	for (size_t i = 0; i < a.n; i++) {
		if (!a.e[i].guid || !a.e[i].addr)
			abort();
		for (size_t j = 0; j < i; j++)
			if (a.e[j].guid == a.e[i].guid || a.e[j].addr == a.e[i].addr)
				abort();
	}
	text = addrmap_format(&a);
	if (!text)
		abort();
	if (addrmap_parse(&c, text, strlen(text), why, sizeof(why)) || c.n != a.n ||
	    memcmp(a.e, c.e, a.n * sizeof(a.e[0])))
		abort();
	free(text);
	return 0;
}
