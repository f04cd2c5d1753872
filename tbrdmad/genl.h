/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel side: the "tbrdma" generic netlink family over libnl-genl-3 (docs/netlink.md).
 * Two sockets: a blocking one (with a receive timeout) for dumps and RAIL_SET, and a
 * non-blocking one for the "events" group and nlctrl's "notify" group, which tells us when the
 * family is registered/unregistered (module load/unload). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "tbrdma-netlink.h"

struct nl_sock;

typedef struct Kernel {
	char family_name[16];
	struct nl_sock *req;	/* NULL while the family is not resolved */
	struct nl_sock *ev;	/* events + nlctrl notify; always open */
	int family;		/* genl family id, -1 unknown */
	bool events_joined, mgmt_joined;
	/* MGMT_RECV datagrams (group "mgmt"), if set: receiving device, link, sender GUID, data */
	void (*mgmt_fn)(void *userdata, const char *device, uint32_t link, uint64_t peer,
			const uint8_t *data, size_t len);
	void *mgmt_userdata;
} Kernel;

typedef enum KernelEventKind {
	KERNEL_EVENT_OBJECT,		/* DEV/LINK/RAIL_EVENT: re-sync; @text describes it */
	KERNEL_EVENT_FAMILY_NEW,	/* the family (re)appeared */
	KERNEL_EVENT_FAMILY_DEL,	/* the family went away (module unloaded) */
	KERNEL_EVENT_OVERRUN,		/* we lost messages: re-sync */
} KernelEventKind;

typedef void (*kernel_event_fn)(void *userdata, KernelEventKind kind, const char *text);

int kernel_init(Kernel *k, const char *family_name);	/* opens the event socket */
void kernel_done(Kernel *k);
int kernel_event_fd(const Kernel *k);
/* resolves the family (-ENOENT if absent), opens the request socket, joins "events" */
int kernel_connect(Kernel *k, char *msg, size_t msglen);
/* forget the family: closes the request socket and re-opens the event socket (new group ids
 * after a reload); the caller must re-add the event fd to its loop */
int kernel_disconnect(Kernel *k);
/* DEV_GET + LINK_GET + RAIL_GET + ETH_GET dumps into @m (objects of @device only, if not NULL) */
int kernel_dump(Kernel *k, Model *m, const char *device, char *msg, size_t msglen);
int kernel_rail_set_cut(Kernel *k, const char *device, uint32_t link, uint32_t rail, bool cut,
			char *msg, size_t msglen);
/* MGMT_SEND of @len bytes on @device's link @link; 0 or -errno (ENETDOWN, ENOBUFS, ENOENT) */
int kernel_mgmt_send(Kernel *k, const char *device, uint32_t link, const void *data, size_t len,
		     char *msg, size_t msglen);
/* ROUTE_SET: @device's forwarding table := the @n routes (sorted by destination), version
 * @version; 0 or -errno with the kernel's message in @msg */
struct RouteTable;
int kernel_route_set(Kernel *k, const char *device, uint32_t version,
		     const struct RouteTable *t, char *msg, size_t msglen);
/* LINK_TRUST: the sweep's decision on @device's link @link (TBRDMA_TRUST_*, docs/sweep.md
 * "Trust"); 0 or -errno with the kernel's message in @msg */
int kernel_link_trust(Kernel *k, const char *device, uint32_t link, uint8_t trust, char *msg,
		      size_t msglen);
/* AUTH_KEY_SET: @device's fabric key := @key (@len bytes; NULL: none), the previous one accepted
 * @grace_ms more (docs/netlink.md); 0 or -errno with the kernel's message in @msg */
int kernel_auth_key_set(Kernel *k, const char *device, const uint8_t *key, size_t len,
			uint32_t grace_ms, char *msg, size_t msglen);
/* PKEY_SET: @device's partitions := the @n P_Keys (docs/netlink.md); 0 or -errno with the
 * kernel's message in @msg */
int kernel_pkey_set(Kernel *k, const char *device, const uint16_t *keys, unsigned n, char *msg,
		    size_t msglen);
/* PKEY_GET: @device's P_Key table, slot by slot (0: empty), into @table; the slot count or
 * -errno */
int kernel_pkey_get(Kernel *k, const char *device, uint16_t table[TBRDMA_PKEYS_MAX], char *msg,
		    size_t msglen);
/* reads every pending event message; calls @fn for each; 0 or -errno */
int kernel_process_events(Kernel *k, kernel_event_fn fn, void *userdata);
