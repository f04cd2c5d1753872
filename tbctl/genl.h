/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tbctl's requests straight to the kernel's tbrdma genl family (eth, capture), not tbrdmad. */
#pragma once

#include "genl-family.h"

/* Sends @cmd with DEV_NAME @dev and what @fill (if set) adds, passing each reply to @valid (if
 * set); both get @arg. Returns 0, the kernel's -errno (its extended-ack message in @err), or
 * EXIT_ERROR with the reason printed (module not loaded, no socket, no memory). */
int tbctl_genl(uint8_t cmd, const char *dev, int (*fill)(struct nl_msg *m, void *arg),
	       nl_recvmsg_msg_cb_t valid, void *arg, char *err, size_t errlen);
