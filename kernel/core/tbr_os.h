/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_os.h - the only header of the transport core that includes system
 * headers. Under __KERNEL__ it maps the core's needs onto <linux/...>;
 * otherwise onto the C library, so the same .c files build into tbrdma.ko,
 * the host unit tests, the benchmark and the fuzzers.
 *
 * The core needs: fixed-width types, zeroed allocation and free (process
 * context only: object creation and destruction), memcpy/memset, big-endian
 * loads and stores from unaligned byte buffers, count-trailing-zeros and
 * rate-limited debug logging. It needs no locks, threads or clocks: callers
 * serialize calls per QP and pass the time in.
 */
#ifndef TBR_OS_H
#define TBR_OS_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/bitops.h>
#include <linux/printk.h>
#include <linux/version.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * Process context only (QP create/destroy), on behalf of the user creating
 * the QP: charged to its memory cgroup, NULL at its limit (no OOM kill).
 */
static inline void *tbr_zalloc(size_t size)
{
	return kvzalloc(size, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
}

static inline void tbr_free(void *p)
{
	kvfree(p);
}

#define tbr_get_be16(p)		get_unaligned_be16(p)
#define tbr_get_be32(p)		get_unaligned_be32(p)
#define tbr_get_be64(p)		get_unaligned_be64(p)
#define tbr_put_be16(v, p)	put_unaligned_be16(v, p)
#define tbr_put_be32(v, p)	put_unaligned_be32(v, p)
#define tbr_put_be64(v, p)	put_unaligned_be64(v, p)

/* x != 0 */
static inline unsigned int tbr_ctz64(u64 x)
{
	return __ffs64(x);
}

/* x != 0: index of the most significant set bit */
static inline unsigned int tbr_msb64(u64 x)
{
	return fls64(x) - 1;
}

#define tbr_dbg(fmt, ...)	pr_debug_ratelimited("tbrdma: " fmt, ##__VA_ARGS__)

/* one load, never torn or repeated (a value another context may change) */
#define tbr_read_once(x)	READ_ONCE(x)

#else /* !__KERNEL__ */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <endian.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif

#define tbr_read_once(x)	(*(const volatile __typeof__(x) *)&(x))

#ifndef U64_MAX
#define U64_MAX		UINT64_MAX
#endif

static inline void *tbr_zalloc(size_t size)
{
	return calloc(1, size);
}

static inline void tbr_free(void *p)
{
	free(p);
}

static inline u16 tbr_get_be16(const void *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline u32 tbr_get_be32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline u64 tbr_get_be64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void tbr_put_be16(u16 v, void *p)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void tbr_put_be32(u32 v, void *p)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void tbr_put_be64(u64 v, void *p)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

/* x != 0 */
static inline unsigned int tbr_ctz64(u64 x)
{
	return (unsigned int)__builtin_ctzll(x);
}

/* x != 0: index of the most significant set bit */
static inline unsigned int tbr_msb64(u64 x)
{
	return 63u - (unsigned int)__builtin_clzll(x);
}

#ifdef TBR_DEBUG
#include <stdio.h>
#define tbr_dbg(fmt, ...)	fprintf(stderr, "tbrdma: " fmt, ##__VA_ARGS__)
#else
#define tbr_dbg(fmt, ...)	do { } while (0)
#endif

#endif /* __KERNEL__ */

#define TBR_NO_DEADLINE		U64_MAX

/* a function kept out of line (a slow path with a large stack frame) */
#define tbr_noinline		__attribute__((__noinline__))

#endif /* TBR_OS_H */
