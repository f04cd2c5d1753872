/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tbctl doctor (issue 47): the checks a first-time user needs, in order; doctor.c runs and
 * prints them, doctor-host.c holds the ones that read the host (sysfs, libibverbs). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "tbctl.h"

typedef enum Result {
	RESULT_PASS,
	RESULT_WARN,
	RESULT_FAIL,
	RESULT_SKIP,	/* could not be checked: an earlier check failed (not a failure itself) */
} Result;

typedef struct Check {
	const char *name;
	Result result;
	char message[512];
	char hint[512];		/* one line: the fix; "" for none */
} Check;

/* What the checks share, gathered once before they run */
typedef struct Doctor {
	const char *root;	/* prefix of every host path read: $TBCTL_DOCTOR_ROOT, "" (tests) */
	bool thunderbolt;	/* module loaded with a domain */
	int fw_cm;		/* 1 firmware CM (a domain has boot_acl), 0 software, -1 unknown */
	int n_domains;
	char domains[8][32];
	int n_xdomains;
	char xdomains[16][64];	/* their sysfs names (0-1, ...) */
	json_object *status;	/* tbrdmad's replies, NULL when it did not answer */
	json_object *links;
	json_object *fabric;	/* the reply, or an error reply (Sweep=no: unavailable) */
	char daemon_error[512];
} Doctor;

void check_set(Check *c, Result r, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* @d->root + the printf-style path */
void host_path(const Doctor *d, char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* the first line of file @path into @buf, trailing whitespace cut; false if unreadable */
bool read_line_file(const char *path, char *buf, size_t n);

void check_thunderbolt(Doctor *d, Check *c);
void check_peers(Doctor *d, Check *c);
void check_service(Doctor *d, Check *c);
void check_tunnel(Doctor *d, Check *c);
void check_iommu(Doctor *d, Check *c);
void check_provider(Doctor *d, Check *c);
