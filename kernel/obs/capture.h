/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: the capture monitor of a device (obs/capture.c, docs/capture.md):
 * a netdev tbrmonN that shows every frame the device's rails send and
 * receive, as RoCE v2, to packet sockets (tcpdump, tshark, tbctl capture).
 */
#ifndef TBRDMA_OBS_CAPTURE_H
#define TBRDMA_OBS_CAPTURE_H

#include <linux/types.h>

struct tbr_dev;
struct net_device;
struct tbr_link_observer;

/*
 * Make @tdev's monitor (or find the one it has), in its tbrN's network
 * namespace, down. @snaplen: the bytes kept of each frame from now on, 0
 * all (the last request's applies).
 * Context "process", tbr_ctl_mutex held (not RTNL). A reference-free
 * pointer: valid while tbr_ctl_mutex is held.
 */
struct net_device *tbr_cap_new(struct tbr_dev *tdev, u32 snaplen);
/* Remove @tdev's monitor: 0, or -ENOENT. Same context. */
int tbr_cap_del(struct tbr_dev *tdev);
/* removes a device's monitor when the device goes (main.c adds it) */
extern struct tbr_link_observer tbr_cap_observer;

#endif /* TBRDMA_OBS_CAPTURE_H */
