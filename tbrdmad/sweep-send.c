// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sweep's transmit side (docs/sweep.md "Message format"): our whole database as STATE
 * messages to the peer of every up link, fragmented to the link's frame size (warned about
 * once per change), in an authenticated envelope when there is a fabric key. */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "sweep-priv.h"

/* Logs at warning level, once per change, that link @l's frame size splits the database into
 * @parts messages (or leaves @skipped records out, or, @parts 0, nothing fits): a small frame (an eth rail at MTU 1500) must
 * not partition the fabric silently. */
static void frame_warn(Sweep *s, const Link *l, uint32_t frame, unsigned parts, unsigned skipped)
{
	size_t i, free_slot = ELEMENTSOF(s->split);

	for (i = 0; i < ELEMENTSOF(s->split); i++) {
		if (s->split[i].link == l->id)
			break;
		if (!s->split[i].link && free_slot == ELEMENTSOF(s->split))
			free_slot = i;
	}
	if (i == ELEMENTSOF(s->split)) {
		if (parts == 1 && !skipped)
			return;
		i = free_slot < ELEMENTSOF(s->split) ? free_slot : 0;
	} else if (s->split[i].frame == frame && s->split[i].parts == parts &&
		   s->split[i].skipped == skipped) {
		return;
	}
	if (!parts)
		log_warning("sweep: link %u: frame size %u is too small for our own record, "
			    "nothing sent", l->id, frame);
	else if (skipped)
		log_warning("sweep: link %u: frame size %u: %u record(s) do not fit with ours, not sent",
			    l->id, frame, skipped);
	else if (parts > 1)
		log_warning("sweep: link %u: frame size %u: the database is sent in %u messages",
			    l->id, frame, parts);
	s->split[i].link = l->id;
	s->split[i].frame = frame;
	s->split[i].parts = parts;
	s->split[i].skipped = skipped;
}

int sweep_mgmt_send(Sweep *s, const char *device, const Link *l, const uint8_t *data, size_t len,
		    char *err, size_t errlen)
{
	uint8_t buf[SWEEP_MSG_MAX];
	const Device *d;
	int n;

	if (!s->auth)
		return kernel_mgmt_send(&s->m->kernel, device, l->id, data, len, err, errlen);
	/* the envelope names us as its sender: the GUID of the device the link is on */
	d = model_find_device(&s->m->model, device);
	if (!d || !d->guid)
		return -ENODEV;
	n = auth_wrap(s->auth, d->guid, l->peer_guid, data, len, buf, sizeof(buf),
		      now_usec(CLOCK_REALTIME));
	if (n < 0)
		return n;
	return kernel_mgmt_send(&s->m->kernel, device, l->id, buf, (size_t)n, err, errlen);
}

void sweep_send_state(Sweep *s, const Device *d)
{
	static SweepMsg msg, part;
	uint8_t buf[SWEEP_MSG_MAX];
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	const Model *mo = &s->m->model;

	memset(&msg, 0, sizeof(msg));
	msg.type = SWEEP_TYPE_STATE;
	msg.sender = s->db.self;
	msg.master = s->master;
	msg.epoch = s->epoch;
	msg.priority = (uint8_t)s->m->config.priority;
	for (size_t i = 0; i < s->db.n_hosts; i++) {
		HostRecord *r = &msg.rec[msg.n_records++];
		uint64_t age;

		*r = s->db.hosts[i];
		age = now > r->origin_usec ? now - r->origin_usec : 0;
		r->age_ms = (uint32_t)(age / 1000);
	}
	for (size_t i = 0; i < mo->n_links; i++) {
		const Link *l = &mo->links[i];
		uint32_t frame = l->has_max_frame && l->max_frame < sizeof(buf) ? l->max_frame :
			sizeof(buf);
		unsigned pos = 0, parts = 0, skipped = 0;
		int n;

		if (strcmp(l->device, d->name) || !l->up || l->trust)
			continue;	/* (a held link carries nothing: docs/sweep.md "Trust") */
		if (s->auth)
			frame = frame > AUTH_OVERHEAD ? frame - AUTH_OVERHEAD : 0;
		while ((n = sweep_fragment(&msg, frame, &pos, &part, &skipped)) > 0) {
			char err[256] = "";
			int len = sweep_encode(&part, buf, frame);
			int r;

			if (len < 0) {
				log_warning_errno(len, "sweep: encoding: %m");
				break;
			}
			parts++;
			r = sweep_mgmt_send(s, d->name, l, buf, (size_t)len, err, sizeof(err));
			if (r < 0) {
				s->tx_err++;
				if (r == -EMSGSIZE)
					log_warning_errno(r, "sweep: MGMT_SEND %s/%u, %d bytes: %m %s",
							  d->name, l->id, len, err);
				else
					log_debug_errno(r, "sweep: MGMT_SEND %s/%u: %m %s", d->name,
							l->id, err);
			} else {
				s->tx++;
			}
		}
		frame_warn(s, l, frame, parts, skipped);
	}
}
