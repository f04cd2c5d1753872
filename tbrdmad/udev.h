/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* udev discovery's sd-device glue (udev.c): enumerate, then monitor; fills Manager.discovery. */
#pragma once

#include <stdint.h>

typedef struct Manager Manager;
typedef struct Udev Udev;

/* never fails for want of udev (logs once and goes on); -errno only for ENOMEM and the like */
int udev_start(Manager *m, Udev **ret);
Udev *udev_free(Udev *u);
/* "monitoring", "monitoring (no udevd)", "no monitor: ...", "off"; events seen */
void udev_info(const Udev *u, const char **state, uint64_t *events);
