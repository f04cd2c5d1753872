// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The in-memory model: growable arrays of devices, links and rails. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

void model_clear(Model *m)
{
	free(m->devices);
	free(m->links);
	free(m->rails);
	free(m->eth);
	*m = (Model){ 0 };
}

void model_replace(Model *to, Model *from)
{
	model_clear(to);
	*to = *from;
	*from = (Model){ 0 };
}

static void *grow(void **array, size_t *n, size_t size)
{
	void *p = realloc(*array, (*n + 1) * size);

	if (!p)
		return NULL;
	*array = p;
	p = (char *)p + *n * size;
	memset(p, 0, size);
	(*n)++;
	return p;
}

Device *model_add_device(Model *m)
{
	return grow((void **)&m->devices, &m->n_devices, sizeof(Device));
}

Link *model_add_link(Model *m)
{
	return grow((void **)&m->links, &m->n_links, sizeof(Link));
}

Rail *model_add_rail(Model *m)
{
	return grow((void **)&m->rails, &m->n_rails, sizeof(Rail));
}

EthBinding *model_add_eth(Model *m)
{
	return grow((void **)&m->eth, &m->n_eth, sizeof(EthBinding));
}

const Device *model_find_device(const Model *m, const char *name)
{
	for (size_t i = 0; i < m->n_devices; i++)
		if (!strcmp(m->devices[i].name, name))
			return &m->devices[i];
	return NULL;
}

const Link *model_find_link(const Model *m, const char *device, uint32_t id)
{
	for (size_t i = 0; i < m->n_links; i++)
		if (m->links[i].id == id && !strcmp(m->links[i].device, device))
			return &m->links[i];
	return NULL;
}

const Rail *model_find_rail(const Model *m, const char *device, uint32_t link, uint32_t id)
{
	for (size_t i = 0; i < m->n_rails; i++)
		if (m->rails[i].link == link && m->rails[i].id == id &&
		    !strcmp(m->rails[i].device, device))
			return &m->rails[i];
	return NULL;
}

const EthBinding *model_find_eth(const Model *m, const char *device, const char *ifname)
{
	for (size_t i = 0; i < m->n_eth; i++)
		if (!strcmp(m->eth[i].ifname, ifname) && !strcmp(m->eth[i].device, device))
			return &m->eth[i];
	return NULL;
}

uint32_t model_best_lane_mbps(const Model *m, const char *device)
{
	uint32_t best = 0;

	for (size_t i = 0; i < m->n_rails; i++) {
		const Rail *r = &m->rails[i];

		if (!strcmp(r->backend, "tb") && r->lanes && !strcmp(r->device, device) &&
		    r->lane_mbps > best)
			best = r->lane_mbps;
	}
	return best;
}

void model_flag_slow(Model *m, uint32_t (*peer_lane_mbps)(void *ctx, const Rail *r), void *ctx)
{
	for (size_t i = 0; i < m->n_rails; i++) {
		Rail *r = &m->rails[i];
		uint32_t best, peer;

		r->slow = false;
		r->expect_mbps = 0;
		if (strcmp(r->backend, "tb") || !r->lanes)
			continue;
		best = model_best_lane_mbps(m, r->device);
		peer = peer_lane_mbps ? peer_lane_mbps(ctx, r) : 0;
		if (peer && peer < best)
			best = peer;
		r->expect_mbps = best;
		r->slow = r->lanes < 2 || r->lane_mbps < best;
	}
}
