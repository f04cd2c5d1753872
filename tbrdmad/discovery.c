// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * udev discovery's pure logic (discovery.h). Everything a device says about itself is treated as
 * hostile: names must be short and plain (they end up in logs and JSON), text attributes are cut
 * to printable ASCII, numbers are parsed strictly. A remove event carries no sysfs attributes, so
 * nothing but SUBSYSTEM, DEVTYPE and SYSNAME is required.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"

#define TB_SERVICE_KEY "tbrdma"
#define TB_MODALIAS_PREFIX "tbsvc:k" TB_SERVICE_KEY "p"

static bool name_ok(const char *s, size_t max)
{
	size_t n;

	if (!s || !*s)
		return false;
	n = strlen(s);
	if (n >= max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.' || c == ':' || c == '_'))
			return false;
	}
	return true;
}

/* printable ASCII copy, trailing whitespace (sysfs' newline) dropped */
static void text_copy(char *dst, size_t size, const char *src)
{
	size_t n = src ? strnlen(src, size) : 0, j;

	while (n && (src[n - 1] == '\n' || src[n - 1] == ' '))
		n--;
	if (n > size - 1)
		n = size - 1;
	for (j = 0; j < n; j++)
		dst[j] = (src[j] >= 0x20 && src[j] < 0x7f) ? src[j] : '?';
	dst[j] = '\0';
}

static bool parse_u32(const char *s, uint32_t *v)
{
	unsigned long long x = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		x = x * 10 + (unsigned)(*s - '0');
		if (x > UINT32_MAX)
			return false;
	}
	*v = (uint32_t)x;
	return true;
}

static bool parse_guid(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	size_t n = 0;

	if (!s)
		return false;
	for (; *s && *s != '\n'; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (n >= 16)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	if (!n)
		return false;
	*v = x;
	return true;
}

int disc_classify(DiscGetFn get, void *ud, DiscDevice *out)
{
	const char *subsystem = get(ud, "SUBSYSTEM"), *devtype = get(ud, "DEVTYPE");
	const char *sysname = get(ud, "SYSNAME"), *s;

	memset(out, 0, sizeof(*out));
	if (!subsystem || !devtype)
		return 0;
	if (!strcmp(subsystem, "thunderbolt") && !strcmp(devtype, "thunderbolt_xdomain")) {
		if (!name_ok(sysname, DISC_NAME_MAX))
			return -EINVAL;
		out->kind = DISC_XDOMAIN;
		snprintf(out->name, sizeof(out->name), "%s", sysname);
		text_copy(out->unique_id, sizeof(out->unique_id), get(ud, "@unique_id"));
		text_copy(out->device_name, sizeof(out->device_name), get(ud, "@device_name"));
		text_copy(out->vendor_name, sizeof(out->vendor_name), get(ud, "@vendor_name"));
		return 1;
	}
	if (!strcmp(subsystem, "thunderbolt") && !strcmp(devtype, "thunderbolt_service")) {
		const char *dot;

		/* "<xdomain>.<id>" */
		if (!name_ok(sysname, DISC_NAME_MAX))
			return -EINVAL;
		dot = strrchr(sysname, '.');
		if (!dot || dot == sysname || !dot[1])
			return -EINVAL;
		out->kind = DISC_SERVICE;
		snprintf(out->name, sizeof(out->name), "%s", sysname);
		snprintf(out->xdomain, sizeof(out->xdomain), "%.*s", (int)(dot - sysname), sysname);
		s = get(ud, "MODALIAS");
		if (s && !strncmp(s, TB_MODALIAS_PREFIX, strlen(TB_MODALIAS_PREFIX)))
			out->ours = true;
		s = get(ud, "@key");
		if (s && !strncmp(s, TB_SERVICE_KEY, strlen(TB_SERVICE_KEY)) &&
		    (!s[strlen(TB_SERVICE_KEY)] || s[strlen(TB_SERVICE_KEY)] == '\n'))
			out->ours = true;
		return 1;
	}
	if (!strcmp(subsystem, "tbrdma") && !strcmp(devtype, "tbrdma_link")) {
		const char *colon;

		/* "<device>:link<N>": everything needed is in the name (remove has no attributes) */
		if (!name_ok(sysname, DISC_NAME_MAX))
			return -EINVAL;
		colon = strchr(sysname, ':');
		if (!colon || colon == sysname || (size_t)(colon - sysname) >= sizeof(out->device) ||
		    strncmp(colon + 1, "link", 4) || !parse_u32(colon + 5, &out->link_id) ||
		    out->link_id == 0)
			return -EINVAL;
		out->kind = DISC_LINK;
		snprintf(out->name, sizeof(out->name), "%s", sysname);
		snprintf(out->device, sizeof(out->device), "%.*s", (int)(colon - sysname), sysname);
		if (!parse_guid(get(ud, "@peer_guid"), &out->peer_guid))
			out->peer_guid = 0;
		s = get(ud, "@state");
		out->up = s && !strncmp(s, "up", 2);
		return 1;
	}
	return 0;
}

const DiscDevice *disc_find(const Discovery *d, DiscKind kind, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->devs[i].kind == kind && !strcmp(d->devs[i].name, name))
			return &d->devs[i];
	return NULL;
}

static bool same(const DiscDevice *a, const DiscDevice *b)
{
	return a->kind == b->kind && !strcmp(a->name, b->name) && !strcmp(a->xdomain, b->xdomain) &&
	       a->ours == b->ours && !strcmp(a->unique_id, b->unique_id) &&
	       !strcmp(a->device_name, b->device_name) &&
	       !strcmp(a->vendor_name, b->vendor_name) && !strcmp(a->device, b->device) &&
	       a->link_id == b->link_id && a->peer_guid == b->peer_guid && a->up == b->up;
}

static void remove_at(Discovery *d, size_t i)
{
	memmove(&d->devs[i], &d->devs[i + 1], (d->n - i - 1) * sizeof(*d->devs));
	d->n--;
}

int disc_apply(Discovery *d, DiscAction action, const DiscDevice *dev)
{
	DiscDevice *cur = (DiscDevice *)disc_find(d, dev->kind, dev->name);
	int changed = 0;

	if (action == DISC_REMOVE) {
		if (cur) {
			remove_at(d, (size_t)(cur - d->devs));
			changed = 1;
		}
		if (dev->kind == DISC_XDOMAIN)
			for (size_t i = d->n; i-- > 0;)
				if (d->devs[i].kind == DISC_SERVICE &&
				    !strcmp(d->devs[i].xdomain, dev->name)) {
					remove_at(d, i);
					changed = 1;
				}
		return changed;
	}
	/* add and change alike: make the set hold @dev as it is now */
	if (cur) {
		if (same(cur, dev))
			return 0;
		*cur = *dev;
		return 1;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		DiscDevice *p = realloc(d->devs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		d->devs = p;
		d->cap = cap;
	}
	d->devs[d->n++] = *dev;
	return 1;
}

void disc_clear(Discovery *d)
{
	free(d->devs);
	*d = (Discovery){ 0 };
}

bool disc_xdomain_has_service(const Discovery *d, const char *xdomain)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->devs[i].kind == DISC_SERVICE && d->devs[i].ours &&
		    !strcmp(d->devs[i].xdomain, xdomain))
			return true;
	return false;
}

void disc_json(const Discovery *d, json_object *o)
{
	json_object *peers = json_object_new_array(), *links = json_object_new_array();

	for (size_t i = 0; i < d->n; i++) {
		const DiscDevice *x = &d->devs[i];
		json_object *p;

		if (x->kind == DISC_LINK) {
			json_object_array_add(links, json_object_new_string(x->name));
			continue;
		}
		if (x->kind != DISC_XDOMAIN)
			continue;
		p = json_object_new_object();
		json_object_object_add(p, "name", json_object_new_string(x->name));
		json_object_object_add(p, "unique_id", json_object_new_string(x->unique_id));
		json_object_object_add(p, "device_name", json_object_new_string(x->device_name));
		json_object_object_add(p, "vendor_name", json_object_new_string(x->vendor_name));
		json_object_object_add(p, "service",
				       json_object_new_boolean(disc_xdomain_has_service(d, x->name)));
		json_object_array_add(peers, p);
	}
	json_object_object_add(o, "thunderbolt_peers", peers);
	json_object_object_add(o, "links", links);
}
