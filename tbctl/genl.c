// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl's requests straight to the kernel's tbrdma genl family (eth bind/unbind, capture). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "genl.h"
#include "tbctl.h"

int tbctl_genl(uint8_t cmd, const char *dev, int (*fill)(struct nl_msg *m, void *arg),
	       nl_recvmsg_msg_cb_t valid, void *arg, char *err, size_t errlen)
{
	struct nl_sock *sk;
	struct nl_msg *msg;
	int fam, k;

	k = tbr_genl_open(&sk, &fam, TBRDMA_GENL_NAME, 5, err, errlen);
	if (k == -ENOENT) {
		fprintf(stderr, "tbctl: the tbrdma kernel module is not loaded (modprobe tbrdma)\n");
		return EXIT_ERROR;
	} else if (k < 0) {
		fprintf(stderr, "tbctl: %s\n", err[0] ? err : strerror(-k));
		return EXIT_ERROR;
	}
	msg = tbr_genl_msg(fam, cmd, NLM_F_ACK, 0);
	if (!msg || nla_put_string(msg, TBRDMA_ATTR_DEV_NAME, dev) < 0 || (fill && fill(msg, arg) < 0)) {
		fprintf(stderr, "tbctl: out of memory\n");
		nlmsg_free(msg);
		nl_socket_free(sk);
		return EXIT_ERROR;
	}
	k = tbr_genl_request(sk, msg, valid, arg, err, errlen);	/* frees msg */
	nl_socket_free(sk);
	return k;
}
