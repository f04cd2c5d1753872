/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * udev discovery's pure part: which devices matter (classification of a device's properties, which
 * come from sysfs and the uevent and are not trusted), and the set of them the daemon knows
 * (idempotent add/change/remove). udev.c feeds it from sd-device; the unit tests feed it directly.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define DISC_NAME_MAX 64
#define DISC_TEXT_MAX 64

typedef enum DiscKind {
	DISC_XDOMAIN = 1,	/* thunderbolt_xdomain: another host at the end of a cable */
	DISC_SERVICE,		/* thunderbolt_service under an XDomain (ours: key "tbrdma") */
	DISC_LINK,		/* tbrdma bus, tbrdma_link: DEVICE:linkN */
} DiscKind;

typedef enum DiscAction { DISC_ADD, DISC_CHANGE, DISC_REMOVE } DiscAction;

typedef struct DiscDevice {
	DiscKind kind;
	char name[DISC_NAME_MAX];	/* sysname: "0-1", "0-1.1", "tbrdma0:link1" */
	/* DISC_SERVICE */
	char xdomain[DISC_NAME_MAX];	/* the XDomain it belongs to ("0-1") */
	bool ours;			/* the tbrdma service */
	/* DISC_XDOMAIN (printable ASCII, "" if absent) */
	char unique_id[DISC_TEXT_MAX], device_name[DISC_TEXT_MAX], vendor_name[DISC_TEXT_MAX];
	/* DISC_LINK */
	char device[32];
	uint32_t link_id;
	uint64_t peer_guid;		/* 0 if absent */
	bool up;
} DiscDevice;

/*
 * A property or attribute of the device being classified, NULL if it has none: "SUBSYSTEM",
 * "DEVTYPE", "SYSNAME", "MODALIAS" (uevent properties), "@name" for the sysfs attribute "name".
 */
typedef const char *(*DiscGetFn)(void *userdata, const char *key);

/* 1: @out filled; 0: not a device we track; -EINVAL: one of ours with unusable properties. */
int disc_classify(DiscGetFn get, void *userdata, DiscDevice *out);

typedef struct Discovery {
	DiscDevice *devs;
	size_t n, cap;
} Discovery;

/* 1 if the set changed, 0 if not (add of a known device unchanged, remove of an unknown one),
 * -ENOMEM. Removing an XDomain removes its services. */
int disc_apply(Discovery *d, DiscAction action, const DiscDevice *dev);
void disc_clear(Discovery *d);
const DiscDevice *disc_find(const Discovery *d, DiscKind kind, const char *name);
/* does the XDomain @xdomain have our service? */
bool disc_xdomain_has_service(const Discovery *d, const char *xdomain);
/* {"thunderbolt_peers":[{"name","unique_id","device_name","vendor_name","service"}...],
 *  "links":["tbrdma0:link1",...]} added to @o */
void disc_json(const Discovery *d, json_object *o);
