/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers shared by tbrdmad's files (and tbctl): cleanup attributes, array size. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(const int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Takes ownership: returns the pointer and sets the variable to NULL (for _cleanup_ vars). */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

static inline int streq_ptr(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* @clock's time in µs */
static inline uint64_t now_usec(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

/* big-endian fields of the sweep's and the fabric key's wire formats */
static inline void be_put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static inline void be_put32(uint8_t *p, uint32_t v) { be_put16(p, v >> 16); be_put16(p + 2, v); }
static inline void be_put64(uint8_t *p, uint64_t v) { be_put32(p, v >> 32); be_put32(p + 4, v); }
/* a GUID as 16 hex digits (@len bytes of @s, "0x" allowed before them), not 0: 0 or -EINVAL */
static inline int guid_parse(const char *s, size_t len, uint64_t *guid)
{
	uint64_t g = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (len != 16)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		g = g << 4 | d;
	}
	if (!g)
		return -EINVAL;
	*guid = g;
	return 0;
}

static inline uint16_t be_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t be_get32(const uint8_t *p) { return (uint32_t)be_get16(p) << 16 | be_get16(p + 2); }
static inline uint64_t be_get64(const uint8_t *p) { return (uint64_t)be_get32(p) << 32 | be_get32(p + 4); }

/* Says why something failed: the reason into @why (@n bytes; nothing when @why is NULL), returns
 * @err (a negative errno). */
static inline __attribute__((format(printf, 4, 5)))
int failf(char *why, size_t n, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && n) {
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return err;
}
