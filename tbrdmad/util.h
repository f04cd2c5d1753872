/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers shared by tbrdmad's files (and tbctl): cleanup attributes, array size. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
