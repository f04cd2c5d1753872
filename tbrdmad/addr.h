/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* IPv4 and IPv6 addresses of tbrN over libnl-route-3 (rtnetlink of the daemon's network namespace). */
#pragma once

#include <stdint.h>

/* the first IPv4 address of @ifname inside @net/@prefix (host order), 0 if none, -errno */
int64_t addr_find_in_pool(const char *ifname, uint32_t net, unsigned prefix);
/* sets @ifname up, adds @addr/@prefix, removes other addresses of @net/@prefix; 0 or -errno */
int addr_apply(const char *ifname, uint32_t addr, unsigned prefix, uint32_t net);
/* sets @ifname up, adds the IPv6 @addr/64 (no DAD); 0 or -errno */
int addr6_apply(const char *ifname, const uint8_t addr[16]);
