// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl counters [DEVICE]: the kernel's traffic and error counters (docs/netlink.md
 * TBRDMA_STAT_*), one line per device (sum of its links), link and rail, like `ip -s link`;
 * then one line per Ethernet NIC carrying eth rails, with the frames it dropped as not from a
 * peer's MAC (RX-FOREIGN). By default the counters read first (traffic, losses, errors: a
 * terminal's width); -v every counter of genl-family.c's table, --json all of them too. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "genl-family.h"
#include "tbctl.h"

/* the default columns, as `ip -s link` and `rdma statistic` show first */
static const unsigned brief[] = {
	TBRDMA_STAT_TX_FRAMES, TBRDMA_STAT_TX_BYTES, TBRDMA_STAT_RX_FRAMES, TBRDMA_STAT_RX_BYTES,
	TBRDMA_STAT_TX_LOST, TBRDMA_STAT_DROPS, TBRDMA_STAT_RX_ERRORS,
};

/* whether counter @stat has a column */
static bool shown(unsigned stat)
{
	if (!tbr_counter(stat))
		return false;
	if (arg.verbose)
		return true;
	for (size_t i = 0; i < ELEMENTSOF(brief); i++)
		if (brief[i] == stat)
			return true;
	return false;
}

static void row(struct libscols_line *l, json_object *o, const char *array)
{
	json_object *c = jget(o, "counters");
	char what[128];
	size_t col = 2;

	if (!strcmp(array, "links"))
		snprintf(what, sizeof(what), "%s link %lld", jstr(o, "device"), (long long)jint(o, "id"));
	else if (!strcmp(array, "rails"))
		snprintf(what, sizeof(what), "%s link %lld rail %lld %s%s%s", jstr(o, "device"),
			 (long long)jint(o, "link"), (long long)jint(o, "id"), jstr(o, "backend"),
			 jstr(o, "ifname")[0] ? " " : "", jstr(o, "ifname"));
	else if (!strcmp(array, "eth"))
		snprintf(what, sizeof(what), "%s eth %s", jstr(o, "device"), jstr(o, "ifname"));
	else
		snprintf(what, sizeof(what), "%s", jstr(o, "device"));
	cell(l, 0, "%s", what);
	cell(l, 1, "%s", jget(o, "state") ? jstr(o, "state") : "-");
	for (unsigned i = 0; i <= TBRDMA_STAT_MAX; i++) {
		const TbrCounter *k = tbr_counter(i);

		if (!shown(i))
			continue;
		if (c)
			cell(l, col++, "%" PRIu64, juint(c, k->name));
		else
			cell(l, col++, "-");
	}
	if (jget(o, "rx_foreign"))
		cell(l, col, "%" PRIu64, juint(o, "rx_foreign"));
	else
		cell(l, col, "-");
}

int verb_counters(int argc, char **argv)
{
	static const char *columns[2 + TBRDMA_STAT_MAX + 1 + 1] = { "OBJECT", "STATE" };
	static const char *const arrays[] = { "devices", "links", "rails", "eth", NULL };
	ListVerb v = {
		.name = "counters",
		.device = true,
		.columns = columns,
		.arrays = arrays,
		.row = row,
	};

	v.n_columns = 2;
	for (unsigned i = 0; i <= TBRDMA_STAT_MAX; i++)
		if (shown(i))
			columns[v.n_columns++] = tbr_counter(i)->column;
	columns[v.n_columns++] = "RX-FOREIGN";
	return list_verb(&v, argc, argv);
}
