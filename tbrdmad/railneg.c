// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rail negotiation over the management channel (docs/sweep.md "Rail negotiation"). On every
 * light sweep, and at once when this end's rails change, the daemon sends a RAILS message
 * (negotiate.c) on each up link advertising the link's rails as the kernel shows them. With the
 * peer's latest advertisement the agreement is recomputed (intersection, minimums) whenever
 * either side changes, logged when it changes, and shown in the links JSON ("negotiation").
 * Programming the kernel: a rail this end has but the peer does not advertise in two successive
 * messages is disabled with RAIL_SET CUT=1 (backends without cut refuse: logged once), and
 * re-enabled when the peer advertises it again; rails disabled by an administrator are left
 * alone. The frame size has no genl knob: the agreed value is reported (each backend already
 * sizes its frames with its peer).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "manager.h"
#include "negotiate.h"
#include "railneg.h"
#include "sweep.h"
#include "util.h"

#define NEG_LINKS_MAX 64
#define MISSES_TO_CUT 2

typedef struct LinkNeg {
	uint32_t link;
	uint64_t peer;
	bool present;			/* in the model at the last run */
	bool have_peer, have_agreed;
	RailsMsg local, peer_msg;
	RailsAgreed agreed;
	uint8_t miss[RAILS_MAX];	/* successive peer messages without this local rail */
	uint16_t cut_by_us;		/* rails disabled by negotiation */
	bool cut_refused;		/* the backend cannot cut: said once */
	uint64_t tx, rx, rx_bad;
} LinkNeg;

struct RailNeg {
	Manager *m;
	char device[MODEL_NAME_MAX];
	LinkNeg links[NEG_LINKS_MAX];
	size_t n;
};

RailNeg *railneg_new(Manager *m)
{
	RailNeg *n = calloc(1, sizeof(*n));

	if (n)
		n->m = m;
	return n;
}

RailNeg *railneg_free(RailNeg *n)
{
	free(n);
	return NULL;
}

static LinkNeg *find(RailNeg *n, uint32_t link)
{
	for (size_t i = 0; i < n->n; i++)
		if (n->links[i].link == link)
			return &n->links[i];
	return NULL;
}

static LinkNeg *get(RailNeg *n, uint32_t link, uint64_t peer)
{
	LinkNeg *l = find(n, link);

	if (l && l->peer != peer) {
		/* the link id now leads to another host: start over */
		memset(l, 0, sizeof(*l));
		l->link = link;
	}
	if (!l) {
		if (n->n == NEG_LINKS_MAX)
			return NULL;
		l = &n->links[n->n++];
		memset(l, 0, sizeof(*l));
		l->link = link;
	}
	l->peer = peer;
	return l;
}

/* this end's advertisement for @link, from the kernel model */
static void build_local(RailNeg *n, const Device *d, const Link *lk, LinkNeg *l)
{
	const Model *mo = &n->m->model;
	RailsMsg *m = &l->local;

	memset(m, 0, sizeof(*m));
	m->version = RAILS_VERSION;
	m->sender = d->guid;
	m->link = lk->id;
	m->max_frame = lk->has_max_frame ? lk->max_frame : 0;
	m->best_lane_mbps = model_best_lane_mbps(mo, d->name);
	for (size_t i = 0; i < mo->n_rails && m->n_rails < RAILS_MAX; i++) {
		const Rail *r = &mo->rails[i];
		RailAdv *a;

		if (strcmp(r->device, d->name) || r->link != lk->id || r->id >= RAILS_MAX)
			continue;
		a = &m->rails[m->n_rails++];
		a->id = (uint8_t)r->id;
		a->flags = (r->up ? RAIL_ADV_UP : 0) | (r->cut ? RAIL_ADV_CUT : 0) |
			   (!strcmp(r->backend, "tb") ? RAIL_ADV_E2E : 0);
		/* one lane per emu/eth rail; a Thunderbolt rail's lanes are the kernel's business */
		a->lanes = strcmp(r->backend, "tb") ? 1 : 0;
		a->max_frame = r->has_max_frame ? r->max_frame : 0;
	}
}

static void set_cut(RailNeg *n, LinkNeg *l, unsigned id, bool cut)
{
	char msg[256] = "";
	int r = kernel_rail_set_cut(&n->m->kernel, n->device, l->link, id, cut, msg, sizeof(msg));

	if (r < 0) {
		if (!l->cut_refused)
			log_warning_errno(r, "rails: link %u: cannot %s rail %u: %m%s%s", l->link,
					  cut ? "disable" : "re-enable", id, msg[0] ? ": " : "", msg);
		l->cut_refused = true;
		return;
	}
	log_notice("rails: link %u: rail %u %s (%s)", l->link, id, cut ? "disabled" : "re-enabled",
		   cut ? "the peer does not have it" : "the peer has it again");
	if (cut)
		l->cut_by_us |= 1u << id;
	else
		l->cut_by_us &= ~(1u << id);
}

static void format_mask(uint16_t mask, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < RAILS_MAX && o + 4 < len; i++)
		if (mask & (1u << i))
			o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "", i);
}

/* recompute; @from_peer: a new peer message arrived (counts misses) */
static void agree(RailNeg *n, LinkNeg *l, bool from_peer)
{
	RailsAgreed a;
	bool changed;

	if (!l->have_peer)
		return;
	rails_agree(&l->local, &l->peer_msg, &a);
	changed = !l->have_agreed || !rails_agreed_equal(&a, &l->agreed);
	l->agreed = a;
	l->have_agreed = true;
	if (changed) {
		char g[17], mask[64];

		guid_to_string(l->peer, g);
		format_mask(a.mask, mask, sizeof(mask));
		log_info("rails: link %u with %s: agreed %u rail(s) [%s], %u up at both ends, max "
			 "frame %" PRIu32 ", E2E %s, lanes %u (here %u rail(s), peer %u)", l->link, g,
			 a.n_rails, mask, a.n_up, a.max_frame, a.e2e ? "on" : "off", a.lanes,
			 l->local.n_rails,
			 l->peer_msg.n_rails);
	}
	for (unsigned i = 0; i < l->local.n_rails; i++) {
		const RailAdv *r = &l->local.rails[i];
		bool agreed = a.mask & (1u << r->id);

		if (agreed) {
			l->miss[r->id] = 0;
			if ((l->cut_by_us & (1u << r->id)))
				set_cut(n, l, r->id, false);
			continue;
		}
		if (from_peer && l->miss[r->id] < 255)
			l->miss[r->id]++;
		if (l->miss[r->id] >= MISSES_TO_CUT && !(r->flags & RAIL_ADV_CUT) &&
		    !(l->cut_by_us & (1u << r->id)) && !l->cut_refused)
			set_cut(n, l, r->id, true);
	}
}

void railneg_run(RailNeg *n, const Device *d)
{
	const Model *mo;
	uint8_t buf[RAILS_MSG_LEN_MAX];

	if (!n)
		return;
	mo = &n->m->model;
	snprintf(n->device, sizeof(n->device), "%s", d->name);
	for (size_t i = 0; i < n->n; i++)
		n->links[i].present = false;
	for (size_t i = 0; i < mo->n_links; i++) {
		const Link *lk = &mo->links[i];
		LinkNeg *l;
		char err[256] = "";
		int len, r;

		if (strcmp(lk->device, d->name))
			continue;
		l = get(n, lk->id, lk->peer_guid);
		if (!l)
			break;
		l->present = true;
		build_local(n, d, lk, l);
		agree(n, l, false);
		if (!lk->up || lk->trust)	/* held: carries nothing */
			continue;
		len = rails_encode(&l->local, buf, sizeof(buf));
		if (len < 0)
			continue;
		r = sweep_mgmt_send(n->m->sweep, d->name, lk, buf, (size_t)len, err, sizeof(err));
		if (r >= 0)
			l->tx++;
		else
			log_debug_errno(r, "rails: MGMT_SEND %s/%u: %m %s", d->name, lk->id, err);
	}
	/* links that went away: forget them */
	for (size_t i = n->n; i-- > 0;) {
		if (n->links[i].present)
			continue;
		log_info("rails: link %u gone, its agreement with it", n->links[i].link);
		memmove(&n->links[i], &n->links[i + 1], (n->n - i - 1) * sizeof(n->links[0]));
		n->n--;
	}
}

int railneg_recv(RailNeg *n, uint32_t link, uint64_t peer, const uint8_t *data, size_t len)
{
	RailsMsg msg;
	LinkNeg *l;
	char why[128], g[17];
	bool changed;
	int r;

	if (!n)
		return 0;
	guid_to_string(peer, g);
	r = rails_decode(&msg, data, len, why, sizeof(why));
	l = find(n, link);
	if (r == 0 && msg.sender != peer) {
		r = -EBADMSG;
		snprintf(why, sizeof(why), "claims another sender than %s", g);
	}
	if (r < 0) {
		if (l)
			l->rx_bad++;
		log_debug("rails: dropped a RAILS message from %s on link %u: %s", g, link, why);
		return r;
	}
	if (!l || l->peer != peer)
		return 0;	/* a link the model does not have yet: its advert comes again */
	l->rx++;
	changed = !l->have_peer || l->peer_msg.best_lane_mbps != msg.best_lane_mbps;
	l->peer_msg = msg;
	l->have_peer = true;
	agree(n, l, true);
	if (changed)	/* the slow flags compare with the peer's best */
		model_flag_slow(&n->m->model, railneg_peer_lane_mbps, n);
	return 0;
}

uint32_t railneg_peer_lane_mbps(void *ctx, const Rail *r)
{
	RailNeg *n = ctx;
	LinkNeg *l = n && !strcmp(r->device, n->device) ? find(n, r->link) : NULL;

	return l && l->have_peer && l->peer == r->peer_guid ? l->peer_msg.best_lane_mbps : 0;
}

void railneg_link_json(RailNeg *n, const Link *lk, json_object *o)
{
	LinkNeg *l = n && !strcmp(lk->device, n->device) ? find(n, lk->id) : NULL;
	json_object *j, *a;

	if (!l)
		return;
	j = json_object_new_object();
	json_object_object_add(j, "state", json_object_new_string(l->have_agreed ? "agreed" :
								   "waiting"));
	json_object_object_add(j, "version", json_object_new_int(RAILS_VERSION));
	json_object_object_add(j, "local_rails", json_object_new_int(l->local.n_rails));
	json_object_object_add(j, "peer_rails",
			       l->have_peer ? json_object_new_int(l->peer_msg.n_rails) : NULL);
	if (l->have_agreed) {
		json_object_object_add(j, "rails", json_object_new_int(l->agreed.n_rails));
		json_object_object_add(j, "rails_up", json_object_new_int(l->agreed.n_up));
		a = json_object_new_array();
		for (unsigned i = 0; i < RAILS_MAX; i++)
			if (l->agreed.mask & (1u << i))
				json_object_array_add(a, json_object_new_int((int)i));
		json_object_object_add(j, "rail_ids", a);
		json_object_object_add(j, "max_frame", l->agreed.max_frame ?
				       json_object_new_int64(l->agreed.max_frame) : NULL);
		json_object_object_add(j, "e2e", json_object_new_boolean(l->agreed.e2e));
		json_object_object_add(j, "lanes", l->agreed.lanes ?
				       json_object_new_int(l->agreed.lanes) : NULL);
	}
	json_object_object_add(j, "peer_lane_mbps", l->have_peer && l->peer_msg.best_lane_mbps ?
			       json_object_new_int64(l->peer_msg.best_lane_mbps) : NULL);
	a = json_object_new_array();
	for (unsigned i = 0; i < RAILS_MAX; i++)
		if (l->cut_by_us & (1u << i))
			json_object_array_add(a, json_object_new_int((int)i));
	json_object_object_add(j, "disabled_rails", a);
	json_object_object_add(j, "tx", json_object_new_uint64(l->tx));
	json_object_object_add(j, "rx", json_object_new_uint64(l->rx));
	json_object_object_add(j, "rx_bad", json_object_new_uint64(l->rx_bad));
	json_object_object_add(o, "negotiation", j);
}
