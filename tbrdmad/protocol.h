/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The state socket's protocol constants, shared by tbrdmad and tbctl (docs/json.md). */
#pragma once

#define TBRDMAD_VERSION		"0.1.0"
#define TBRDMAD_SCHEMA		1		/* "schema" in every response */
#define TBRDMAD_SOCKET		"/run/tbrdmad/tbrdmad.sock"
#define TBRDMAD_STATE_DIR	"/var/lib/tbrdmad"
#define TBRDMAD_CONFIG		"/etc/tbrdmad.conf"
#define TBRDMAD_LINE_MAX	65536		/* longest request line, without its newline */

/* "error": {"code": ...} values */
#define ERR_PARSE		"parse-error"		/* not JSON */
#define ERR_TOO_LARGE		"too-large"		/* line longer than TBRDMAD_LINE_MAX */
#define ERR_INVALID		"invalid-request"	/* JSON, but not a valid request */
#define ERR_UNKNOWN_METHOD	"unknown-method"
#define ERR_PERMISSION		"permission-denied"	/* changing request from non-root */
#define ERR_UNAVAILABLE		"unavailable"		/* kernel module absent */
#define ERR_NOT_FOUND		"not-found"		/* no such device/link/rail */
#define ERR_KERNEL		"kernel-error"		/* the kernel refused (errno, message) */
#define ERR_INTERNAL		"internal-error"
