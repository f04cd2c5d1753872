/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tbrdma: differences between the kernel releases we build for (6.1 .. 6.12). */
#ifndef TBRDMA_COMPAT_H
#define TBRDMA_COMPAT_H

#include <linux/version.h>

/* 6.10 passes a uverbs_attr_bundle instead of ib_udata to create_cq. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define TBR_CREATE_CQ_UDATA_ARG struct uverbs_attr_bundle *attrs
#define TBR_CREATE_CQ_UDATA(attrs) ((attrs) ? &(attrs)->driver_udata : NULL)
#define TBR_CREATE_CQ_UDATA_NAME attrs
#else
#define TBR_CREATE_CQ_UDATA_ARG struct ib_udata *udata_arg
#define TBR_CREATE_CQ_UDATA(udata_arg) (udata_arg)
#define TBR_CREATE_CQ_UDATA_NAME udata_arg
#endif

#endif /* TBRDMA_COMPAT_H */
