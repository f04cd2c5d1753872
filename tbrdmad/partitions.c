// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* P_Key partitions: the [Partition] keys' parsers, the master's membership entries, one host's
 * P_Keys (partitions.h, docs/sweep.md "Partitions"). Takes untrusted text (the configuration
 * file) and untrusted entries (a master's record): bounded, never crashes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "partitions.h"
#include "util.h"

int partition_parse_pkey(const char *v, uint16_t *part)
{
	unsigned long x;
	char *end;

	errno = 0;
	x = strtoul(v, &end, 0);
	if (errno || end == v || *end || v[0] == '-' || x > 0xffff || !(x & PKEY_PART))
		return -EINVAL;
	*part = (uint16_t)(x & PKEY_PART);
	return 0;
}

static uint8_t stronger(uint8_t a, uint8_t b)
{
	return a > b ? a : b;
}

int partition_parse_members(Partition *p, const char *v, char *why, size_t whylen)
{
	Partition q = *p;
	const char *s = v;

	for (;;) {
		const char *tok, *eq, *end;
		uint8_t type = MEMBER_LIMITED;
		uint64_t guid;
		unsigned i;

		while (*s == ' ' || *s == '\t' || *s == ',')
			s++;
		if (!*s)
			break;
		tok = s;
		while (*s && *s != ' ' && *s != '\t' && *s != ',')
			s++;
		end = s;
		eq = memchr(tok, '=', (size_t)(end - tok));
		if (eq) {
			size_t tl = (size_t)(end - eq - 1);

			if (tl == 4 && !strncasecmp(eq + 1, "full", 4))
				type = MEMBER_FULL;
			else if (tl == 7 && !strncasecmp(eq + 1, "limited", 7))
				type = MEMBER_LIMITED;
			else
				return failf(why, whylen, -EINVAL, "membership \"%.*s\" is not full or limited",
					     (int)(tl > 32 ? 32 : tl), eq + 1);
		} else {
			eq = end;
		}
		if (eq - tok == 3 && !strncasecmp(tok, "ALL", 3)) {
			q.all = stronger(q.all, type);
			continue;
		}
		if (guid_parse(tok, (size_t)(eq - tok), &guid) < 0)
			return failf(why, whylen, -EINVAL, "\"%.*s\" is neither ALL nor a GUID",
				     (int)(eq - tok > 32 ? 32 : eq - tok), tok);
		for (i = 0; i < q.n && q.m[i].guid != guid; i++)
			;
		if (i == q.n) {
			if (q.n == PARTITION_MEMBERS_MAX)
				return failf(why, whylen, -E2BIG, "more than %d members",
					     PARTITION_MEMBERS_MAX);
			q.m[q.n].guid = guid;
			q.m[q.n++].type = type;
		} else {
			q.m[i].type = stronger(q.m[i].type, type);
		}
	}
	*p = q;
	return 0;
}

static int put(PKeyEntry *e, int n, uint64_t guid, uint16_t part, uint8_t type)
{
	if (n >= PKEY_ENTRIES_MAX)
		return -E2BIG;
	e[n].guid = guid;
	e[n].pkey = (uint16_t)(part | (type == MEMBER_FULL ? PKEY_FULL : 0));
	return n + 1;
}

int partitions_entries(const PartitionConfig *c, PKeyEntry *e)
{
	bool has_default = false;
	int n = 0;

	if (!c->n)
		return 0;
	for (unsigned i = 0; i < c->n && i < PARTITIONS_MAX; i++) {
		const Partition *p = &c->p[i];

		has_default |= p->part == PKEY_DEFAULT_PART;
		if (p->all != MEMBER_NONE)
			n = put(e, n, 0, p->part, p->all);
		for (unsigned j = 0; n >= 0 && j < p->n; j++)
			n = put(e, n, p->m[j].guid, p->part, p->m[j].type);
		if (n < 0)
			return n;
	}
	if (!has_default)
		n = put(e, n, 0, PKEY_DEFAULT_PART, MEMBER_FULL);
	return n;
}

unsigned partitions_for(const PKeyEntry *e, unsigned n, uint64_t guid, uint16_t *keys)
{
	unsigned k = 0;

	if (!n) {
		keys[0] = PKEY_FULL | PKEY_DEFAULT_PART;
		return 1;
	}
	for (unsigned i = 0; i < n && i < PKEY_ENTRIES_MAX; i++) {
		uint16_t part = e[i].pkey & PKEY_PART;
		unsigned j;

		if ((e[i].guid && e[i].guid != guid) || !part)
			continue;
		for (j = 0; j < k && (keys[j] & PKEY_PART) != part; j++)
			;
		if (j < k) {
			keys[j] |= e[i].pkey & PKEY_FULL;
			continue;
		}
		if (k == PARTITIONS_MAX)
			continue;	/* beyond the table: the master's config was refused that */
		/* insertion, ascending by partition */
		for (j = k; j > 0 && (keys[j - 1] & PKEY_PART) > part; j--)
			keys[j] = keys[j - 1];
		keys[j] = e[i].pkey;
		k++;
	}
	return k;
}
