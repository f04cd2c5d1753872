// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the tb backend under the firmware connection manager (ICM,
 * drivers/thunderbolt/icm.c), as far as a service driver sees it: one DMA
 * tunnel per XDomain for all drivers together, counted in xd->ntunnels,
 * a second tb_xdomain_enable_paths() refused with -EOPNOTSUPP
 * (docs/thunderbolt.md, "Firmware connection manager (ICM)"). How the
 * ICM is recognised at probe: compat.h tbr_tb_fw_cm().
 */
#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/thunderbolt.h>

#include "backends/tb_priv.h"

/*
 * No DMA tunnel on the XDomain (xd->ntunnels, counted by xdomain.c for every
 * driver). Below 0 too: tb_xdomain_disable_paths() counts down on success
 * whether or not the caller had a tunnel (a driver disabling paths it
 * never got).
 */
bool tbr_tb_tunnel_free(struct tbt_conn *conn)
{
	return atomic_read(&conn->xd->ntunnels) <= 0;
}

/*
 * tb_xdomain_enable_paths() of rail @i said -EOPNOTSUPP: the firmware CM
 * (icm.c icm_fr/icm_tr_approve_xdomain_paths()) approves one DMA tunnel per
 * XDomain and counts every driver's (xd->ntunnels), and the thunderbolt
 * core has logged "only one tunnel is supported by the firmware". Rail 0:
 * another service of this XDomain (thunderbolt-net) holds the tunnel, we
 * get no rail until it lets go (tbt_ready_work waits for ntunnels to be 0,
 * then tbt_up_work tries again). A later rail: the firmware CM was not
 * recognised at probe, the rails that came up stay. Said once per conn.
 * conn->lock held.
 */
void tbr_tb_tunnel_refused(struct tbt_conn *conn, unsigned int i)
{
	if (conn->tunnel_logged)
		return;
	conn->tunnel_logged = true;
	if (!i)
		dev_warn(&conn->svc->dev,
			 "tbrdma: no rails: the firmware connection manager allows one DMA tunnel per XDomain and another service of %s holds it (%d tunnel(s), e.g. thunderbolt-net); unload that driver or use the eth backend over it\n",
			 dev_name(&conn->xd->dev), atomic_read(&conn->xd->ntunnels));
	else
		dev_warn(&conn->svc->dev,
			 "tbrdma: the firmware connection manager refused a DMA tunnel for rail %u (one per XDomain%s): going on with %u rail(s)\n",
			 i, conn->fw_cm ? "" : "; not recognised at probe", i);
}
