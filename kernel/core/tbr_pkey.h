/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_pkey.h - P_Key partitions (docs/protocol.md 1.5, docs/sweep.md
 * "Partitions"): a port's P_Key table and the IBTA matching rule.
 *
 * A P_Key is 16 bits: bit 15 the membership (1 full, 0 limited), bits 0-14
 * the partition. Two P_Keys match when their partitions are equal and not 0
 * and at least one of them is a full member: two limited members of one
 * partition do not talk. 0x0000 and 0x8000 (partition 0) match nothing; an
 * empty slot of a table holds 0x0000.
 *
 * The table belongs to the device; its writer (the kernel's genl command)
 * stores each slot with one 16-bit store, readers (every QP, on every frame
 * it sends or receives, in any context) load each slot once: a table
 * changes slot by slot, and a slot whose P_Key stays keeps its index, so a
 * QP on it never sees a change.
 */
#ifndef TBR_PKEY_H
#define TBR_PKEY_H

#include "tbr_os.h"

/* Slots of a port's P_Key table (ibv_query_port's pkey_tbl_len). */
#define TBR_PKEY_TBL_LEN	16
/* The default partition, full member: every port's slot 0 unless told. */
#define TBR_PKEY_DEFAULT	0xffff
#define TBR_PKEY_FULL		0x8000
#define TBR_PKEY_PART		0x7fff

struct tbr_pkey_table {
	u16 key[TBR_PKEY_TBL_LEN];	/* 0: empty slot */
};

static inline bool tbr_pkey_match(u16 a, u16 b)
{
	return (a & TBR_PKEY_PART) && !((a ^ b) & TBR_PKEY_PART) &&
	       ((a | b) & TBR_PKEY_FULL);
}

/*
 * The P_Key in slot @idx of @t (NULL: the table of a port with only the
 * default partition, in slot 0); 0 for an empty slot or an index out of
 * range. Context: any; one load of the slot.
 */
static inline u16 tbr_pkey_get(const struct tbr_pkey_table *t, u32 idx)
{
	if (idx >= TBR_PKEY_TBL_LEN)
		return 0;
	if (!t)
		return idx ? 0 : TBR_PKEY_DEFAULT;
	return tbr_read_once(t->key[idx]);
}

/*
 * The slot of @t whose P_Key a frame carrying @pkey matches (the first),
 * or -1. What a GSI QP (QP1) takes: any partition of its port.
 */
static inline int tbr_pkey_find(const struct tbr_pkey_table *t, u16 pkey)
{
	u32 i;

	for (i = 0; i < TBR_PKEY_TBL_LEN; i++)
		if (tbr_pkey_match(tbr_pkey_get(t, i), pkey))
			return (int)i;
	return -1;
}

/*
 * On the wire the P_Key is carried inverted (ones' complement) in byte 3
 * (high byte) and the top byte of the PSN field (low byte) of the base
 * header, so the default P_Key 0xffff is all zero bits, as every frame was
 * before partitions (docs/protocol.md 1.1).
 */
static inline void tbr_put_pkey(u8 *p, u16 pkey)
{
	p[3] = (u8)(~pkey >> 8);
	p[12] = (u8)~pkey;
}

static inline u16 tbr_get_pkey(const u8 *p)
{
	return (u16)~((u16)p[3] << 8 | p[12]);
}

#endif /* TBR_PKEY_H */
