// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tests/bats/fake-ibverbs.c: a stand-in for libibverbs.so.1 for tbctl doctor's bats tests
 * (TBCTL_LIBIBVERBS=path): its private ABI is PABI (-DPABI=N: it exports verbs_register_driver_N,
 * as rdma-core's library does), and ibv_get_device_list lists the names in $FAKE_IBV_DEVICES
 * (space-separated). Built with -DPROVIDER instead: an empty provider file that loads. */
#include <stdlib.h>
#include <string.h>

#ifndef PROVIDER
#define CAT(a, b) a##b
#define REGISTER(n) CAT(verbs_register_driver_, n)

struct ibv_device {
	char name[64];
};

static struct ibv_device devs[8];

void REGISTER(PABI)(const void *ops)
{
	(void)ops;
}

struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **list = calloc(9, sizeof(*list));
	const char *env = getenv("FAKE_IBV_DEVICES");
	char *s = strdup(env ? env : ""), *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(s, " ", &save); tok && n < 8; tok = strtok_r(NULL, " ", &save)) {
		strncpy(devs[n].name, tok, sizeof(devs[n].name) - 1);
		list[n] = &devs[n];
		n++;
	}
	free(s);
	if (num)
		*num = n;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *dev)
{
	return dev->name;
}
#else
int tbrdma_fake_provider;
#endif
