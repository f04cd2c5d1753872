/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: RDMA verbs over Thunderbolt/USB4 host-to-host DMA rings.
 * Driver-wide objects shared by the verbs files.
 */
#ifndef TBRDMA_H
#define TBRDMA_H

#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "tbr_limits.h"

#define TBRDMA_DRV_NAME "tbrdma"

/*
 * One tbrdma HCA. All peers and all rails of this host sit below it; the
 * destination GID of an address handle or QP selects the peer.
 */
struct tbr_dev {
	struct ib_device ibdev;		/* must be first: ib_alloc_device */
	struct net_device *netdev;	/* tbrN: the RoCE netdev (GIDs) */
};

struct tbr_pd {
	struct ib_pd ibpd;
};

static inline struct tbr_dev *to_tbr_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct tbr_dev, ibdev);
}

/* device.c */
struct tbr_dev *tbr_dev_create(void);
void tbr_dev_destroy(struct tbr_dev *tdev);

/* netdev.c */
struct net_device *tbr_netdev_create(void);
void tbr_netdev_destroy(struct net_device *ndev);

/* unsupported.c: mandatory verbs not implemented yet */
extern const struct ib_device_ops tbr_unsupported_ops;

/* pd.c */
int tbr_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int tbr_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* TBRDMA_H */
