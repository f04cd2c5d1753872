/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Logging: to the journal when stderr is connected to it (JOURNAL_STREAM), else to stderr. */
#pragma once

#include <syslog.h>

void log_set_max_level(int level);
int log_get_max_level(void);
int log_level_from_string(const char *s);	/* -EINVAL if unknown */
void log_open(const char *ident);

/* Logs at @level; @error (errno, either sign) is available as %m; returns -abs(error). */
int log_internal(int level, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_full_errno(level, error, ...) log_internal(level, error, __VA_ARGS__)
#define log_debug(...) log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_internal(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_DEBUG, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_ERR, e, __VA_ARGS__)
