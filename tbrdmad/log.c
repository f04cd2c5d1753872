// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Logging for tbrdmad: the journal (sd-journal) when our stderr is the journal's stream, plain
 * "tbrdmad: message" lines on stderr otherwise (foreground runs, tests). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "log.h"

static int max_level = LOG_INFO;
static bool to_journal;
static const char *ident = "tbrdmad";

void log_set_max_level(int level)
{
	max_level = level;
}

int log_get_max_level(void)
{
	return max_level;
}

int log_level_from_string(const char *s)
{
	static const char *const names[] = { "emerg", "alert", "crit", "err", "warning", "notice",
					     "info", "debug" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i]))
			return (int)i;
	if (!strcasecmp(s, "error"))
		return LOG_ERR;
	if (!strcasecmp(s, "warn"))
		return LOG_WARNING;
	return -EINVAL;
}

/* JOURNAL_STREAM=dev:ino names the journal's stream if it is our stderr. */
void log_open(const char *name)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (name)
		ident = name;
	to_journal = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
		     st.st_dev == dev && st.st_ino == ino;
}

int log_internal(int level, int error, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (error < 0)
		error = -error;
	if (level > max_level)
		return -error;
	errno = error;	/* for %m */
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (to_journal)
		sd_journal_send("MESSAGE=%s", buf, "PRIORITY=%i", level,
				"SYSLOG_IDENTIFIER=%s", ident, error ? "ERRNO=%i" : NULL, error, NULL);
	else
		fprintf(stderr, "%s: %s\n", ident, buf);
	return -error;
}
