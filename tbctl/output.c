// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Output helpers: pretty JSON, libsmartcols tables, JSON field access. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "genl-family.h"
#include "tbctl.h"

void print_json(json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* numbers are right-aligned: the counters' columns and these */
static bool numeric(const char *column)
{
	static const char *const numbers[] = { "LINK", "RAIL", "LINKS", "RAILS", "CREDITS", "INDEX",
					       "IFINDEX", "RAILS-UP", "RX-FOREIGN" };

	for (unsigned i = 0; i <= TBRDMA_STAT_MAX; i++)
		if (tbr_counter(i) && !strcmp(tbr_counter(i)->column, column))
			return true;
	for (size_t i = 0; i < ELEMENTSOF(numbers); i++)
		if (!strcmp(numbers[i], column))
			return true;
	return false;
}

struct libscols_table *table_new(const char *const *columns, size_t n)
{
	struct libscols_table *t = scols_new_table();

	if (!t)
		return NULL;
	scols_table_enable_colors(t, arg.color);
	scols_table_enable_noheadings(t, !arg.legend);
	for (size_t i = 0; i < n; i++)
		scols_table_new_column(t, columns[i], 0, numeric(columns[i]) ? SCOLS_FL_RIGHT : 0);
	return t;
}

int table_print(struct libscols_table *t)
{
	int r = scols_print_table(t);

	scols_unref_table(t);
	return r < 0 ? EXIT_ERROR : EXIT_OK;
}

struct libscols_line *table_add(struct libscols_table *t)
{
	return scols_table_new_line(t, NULL);
}

void cell(struct libscols_line *l, size_t col, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	scols_line_set_data(l, col, buf);
}

void cell_state(struct libscols_line *l, size_t col, const char *state)
{
	scols_line_set_data(l, col, state);
	if (arg.color)
		scols_cell_set_color(scols_line_get_cell(l, col),
				     !strcmp(state, "up") ? "green" : "red");
}

json_object *jget(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

const char *jstr(json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

int64_t jint(json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	return v ? json_object_get_int64(v) : 0;
}

double jdouble(json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	return v ? json_object_get_double(v) : 0;
}

uint64_t juint(json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	return v ? json_object_get_uint64(v) : 0;
}

bool jbool(json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	return v && json_object_get_boolean(v);
}

void format_duration(char *buf, size_t n, uint64_t s)
{
	if (s < 60)
		snprintf(buf, n, "%" PRIu64 "s", s);
	else if (s < 3600)
		snprintf(buf, n, "%" PRIu64 "min %" PRIu64 "s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, n, "%" PRIu64 "h %" PRIu64 "min", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, n, "%" PRIu64 "d %" PRIu64 "h", s / 86400, s % 86400 / 3600);
}
