// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* IPv4 addresses of tbrN with libnl-route-3. The RDMA core turns each IPv4 address of the
 * device's netdev into an IPv4-mapped RoCE v2 GID, so this is all GID assignment takes. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <linux/if_addr.h>

#include "addr.h"

struct scan {
	int ifindex;
	uint32_t net, mask, found;
	uint32_t stale[16];
	unsigned n_stale;
	uint32_t keep;
};

static void scan_cb(struct nl_object *o, void *arg)
{
	struct rtnl_addr *a = (struct rtnl_addr *)o;
	struct scan *s = arg;
	struct nl_addr *local = rtnl_addr_get_local(a);
	uint32_t v;

	if (rtnl_addr_get_ifindex(a) != s->ifindex || rtnl_addr_get_family(a) != AF_INET || !local ||
	    nl_addr_get_len(local) != 4)
		return;
	v = ntohl(*(uint32_t *)nl_addr_get_binary_addr(local));
	if ((v & s->mask) != s->net)
		return;
	if (!s->found)
		s->found = v;
	if (v != s->keep && s->n_stale < 16)
		s->stale[s->n_stale++] = v;
}

static int scan(struct nl_sock *sk, const char *ifname, struct scan *s)
{
	struct nl_cache *cache = NULL;
	int r;

	s->ifindex = (int)if_nametoindex(ifname);
	if (!s->ifindex)
		return -ENODEV;
	r = rtnl_addr_alloc_cache(sk, &cache);
	if (r < 0)
		return -EIO;
	nl_cache_foreach(cache, scan_cb, s);
	nl_cache_free(cache);
	return 0;
}

static struct nl_sock *open_route(void)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (sk && nl_connect(sk, NETLINK_ROUTE) < 0) {
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

int64_t addr_find_in_pool(const char *ifname, uint32_t net, unsigned prefix)
{
	struct scan s = { .net = net, .mask = 0xffffffffu << (32 - prefix) };
	struct nl_sock *sk = open_route();
	int r;

	if (!sk)
		return -ENOMEM;
	r = scan(sk, ifname, &s);
	nl_socket_free(sk);
	return r < 0 ? r : (int64_t)s.found;
}

static int put_addr(struct nl_sock *sk, int ifindex, uint32_t v, unsigned prefix, bool add)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	uint32_t be = htonl(v);
	struct nl_addr *local;
	int r;

	if (!a)
		return -ENOMEM;
	local = nl_addr_build(AF_INET, &be, 4);
	if (!local) {
		rtnl_addr_put(a);
		return -ENOMEM;
	}
	nl_addr_set_prefixlen(local, (int)prefix);
	rtnl_addr_set_ifindex(a, ifindex);
	rtnl_addr_set_family(a, AF_INET);
	rtnl_addr_set_local(a, local);
	rtnl_addr_set_prefixlen(a, prefix);
	if (add) {
		uint32_t bc = htonl(v | ~(0xffffffffu << (32 - prefix)));
		struct nl_addr *b = nl_addr_build(AF_INET, &bc, 4);

		if (b) {
			rtnl_addr_set_broadcast(a, b);
			nl_addr_put(b);
		}
	}
	r = add ? rtnl_addr_add(sk, a, NLM_F_REPLACE) : rtnl_addr_delete(sk, a, 0);
	nl_addr_put(local);
	rtnl_addr_put(a);
	if (r == -NLE_EXIST)
		r = 0;
	return r < 0 ? -EIO : 0;
}

static int set_up(struct nl_sock *sk, int ifindex)
{
	struct rtnl_link *orig = rtnl_link_alloc(), *change = rtnl_link_alloc();
	int r = -ENOMEM;

	if (orig && change) {
		rtnl_link_set_ifindex(orig, ifindex);
		rtnl_link_set_flags(change, IFF_UP);
		r = rtnl_link_change(sk, orig, change, 0) < 0 ? -EIO : 0;
	}
	rtnl_link_put(orig);
	rtnl_link_put(change);
	return r;
}

int addr_apply(const char *ifname, uint32_t addr, unsigned prefix, uint32_t net)
{
	struct scan s = { .net = net, .mask = 0xffffffffu << (32 - prefix), .keep = addr };
	struct nl_sock *sk = open_route();
	int r;

	if (!sk)
		return -ENOMEM;
	r = scan(sk, ifname, &s);
	if (r >= 0)
		r = set_up(sk, s.ifindex);
	/* stale addresses of the pool go first: deleting a primary IPv4 address also deletes the
	 * secondaries of its subnet (unless promote_secondaries), which the new one would be */
	for (unsigned i = 0; r >= 0 && i < s.n_stale; i++)
		put_addr(sk, s.ifindex, s.stale[i], prefix, false);
	if (r >= 0)
		r = put_addr(sk, s.ifindex, addr, prefix, true);
	nl_socket_free(sk);
	return r;
}

int addr6_apply(const char *ifname, const uint8_t addr[16])
{
	struct nl_sock *sk = open_route();
	struct rtnl_addr *a = NULL;
	struct nl_addr *local = NULL;
	int ifindex = (int)if_nametoindex(ifname), r;

	if (!sk)
		return -ENOMEM;
	r = ifindex ? set_up(sk, ifindex) : -ENODEV;
	if (r >= 0) {
		a = rtnl_addr_alloc();
		local = nl_addr_build(AF_INET6, addr, 16);
		r = a && local ? 0 : -ENOMEM;
	}
	if (r >= 0) {
		nl_addr_set_prefixlen(local, 64);
		rtnl_addr_set_ifindex(a, ifindex);
		rtnl_addr_set_family(a, AF_INET6);
		rtnl_addr_set_local(a, local);
		rtnl_addr_set_prefixlen(a, 64);
		/* no duplicate address detection: the address is the GUID's, unique by design,
		 * and a tentative address would not make a GID */
		rtnl_addr_set_flags(a, IFA_F_NODAD);
		r = rtnl_addr_add(sk, a, NLM_F_REPLACE);
		r = r == -NLE_EXIST ? 0 : r < 0 ? -EIO : 0;
	}
	nl_addr_put(local);
	rtnl_addr_put(a);
	nl_socket_free(sk);
	return r;
}
