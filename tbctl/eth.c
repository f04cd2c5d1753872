// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbctl eth bind|unbind IFNAME [DEVICE]: make an Ethernet NIC carry eth rails of a tbrdma device
 * (docs/eth.md), or stop it. Root only. Unlike the other verbs this talks to the kernel's tbrdma
 * generic netlink family directly (ETH_BIND/ETH_UNBIND), not to tbrdmad: udev runs it for NICs
 * marked TBRDMA_ETH=DEVICE (90-tbrdma-eth.rules), before or without any daemon. The daemon
 * notices the new rails through the family's events.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "genl.h"
#include "tbctl.h"

static int eth_fill(struct nl_msg *m, void *ifname)
{
	return nla_put_string(m, TBRDMA_ATTR_ETH_IFNAME, ifname);
}

static int eth_cmd(uint8_t cmd, const char *ifname, const char *dev)
{
	const char *action = cmd == TBRDMA_CMD_ETH_BIND ? "bind" : "unbind";
	char err[256] = "";
	int k;

	k = tbctl_genl(cmd, dev, eth_fill, NULL, (void *)ifname, err, sizeof(err));
	if (k > 0)
		return k;
	if (k < 0) {
		fprintf(stderr, "tbctl: eth %s %s %s: %s%s%s\n", action, ifname, dev,
			k == -EPERM ? "permission denied (root only)" : strerror(-k),
			err[0] ? ": " : "", err);
		return EXIT_ERROR;
	}
	if (!arg.json)
		printf("%s %s %s\n", ifname, cmd == TBRDMA_CMD_ETH_BIND ? "carries eth rails of" :
		       "no longer carries eth rails of", dev);
	else
		printf("{\"ok\": true, \"method\": \"eth-%s\", \"ifname\": \"%s\", \"device\": \"%s\"}\n",
		       action, ifname, dev);
	return EXIT_OK;
}

int verb_eth(int argc, char **argv)
{
	const char *dev = "tbrdma0";
	uint8_t cmd;

	if (argc < 2)
		return usage_error("eth needs bind|unbind IFNAME [DEVICE]");
	if (!strcmp(argv[1], "bind"))
		cmd = TBRDMA_CMD_ETH_BIND;
	else if (!strcmp(argv[1], "unbind"))
		cmd = TBRDMA_CMD_ETH_UNBIND;
	else
		return usage_error("eth: unknown action \"%s\" (bind or unbind)", argv[1]);
	if (argc < 3 || argc > 4)
		return usage_error("eth %s needs IFNAME [DEVICE]", argv[1]);
	if (!argv[2][0] || strlen(argv[2]) >= IFNAMSIZ || strchr(argv[2], '/') || strchr(argv[2], '"'))
		return usage_error("bad IFNAME \"%s\"", argv[2]);
	if (argc == 4) {
		dev = argv[3];
		if (!dev[0] || strlen(dev) >= 32 || strchr(dev, '"'))
			return usage_error("bad DEVICE \"%s\"", dev);
	}
	return eth_cmd(cmd, argv[2], dev);
}
