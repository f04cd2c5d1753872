/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tbctl: the CLI over tbrdmad's state socket (docs/json.md). One file per verb. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include <libsmartcols/libsmartcols.h>

#include "util.h"

enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,		/* the daemon refused or failed, or a bad reply */
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,	/* no daemon on the socket */
};

typedef struct Options {
	const char *socket;
	bool json;
	bool color;
	bool legend;
	bool dot;		/* fabric: Graphviz dot text */
	bool verbose;		/* -v: every column (counters, rails) */
	bool quiet;		/* call() prints nothing: its errors only for call_error() (doctor) */
} Options;

extern Options arg;

/* client.c: sends @request (an object; "schema"-less), returns the reply in *ret.
 * Returns EXIT_OK when the daemon answered "ok": true, EXIT_ERROR for an error reply (message
 * printed, unless --json, where the reply is printed as it is), EXIT_UNREACHABLE.
 * With arg.quiet nothing is printed, and an error reply is returned in *ret too. */
int call(json_object *request, json_object **ret);
/* the message of call()'s last error (what it printed, or would have without arg.quiet) */
const char *call_error(void);
/* call() with {"method": METHOD} and, when @device is not NULL, {"device": DEVICE} */
int call_method(const char *method, const char *device, json_object **ret);
/* call_method() for the read verbs: with --json the reply is printed as it is and *ret is NULL
 * (the verb is done); otherwise the caller owns *ret */
int query(const char *method, const char *device, json_object **ret);

/* output.c */
void print_json(json_object *o);
struct libscols_table *table_new(const char *const *columns, size_t n);
int table_print(struct libscols_table *t);
/* sets the cells of a new line from printf-style strings, one per column */
struct libscols_line *table_add(struct libscols_table *t);
void cell(struct libscols_line *l, size_t col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cell_state(struct libscols_line *l, size_t col, const char *state);	/* coloured up/down */
const char *jstr(json_object *o, const char *key);			/* "" if absent */
int64_t jint(json_object *o, const char *key);				/* 0 if absent */
double jdouble(json_object *o, const char *key);			/* 0 if absent */
uint64_t juint(json_object *o, const char *key);
bool jbool(json_object *o, const char *key);
json_object *jget(json_object *o, const char *key);			/* NULL if absent */
void format_duration(char *buf, size_t n, uint64_t sec);

/* list.c: a read verb that lists the reply's arrays in a table */
typedef struct ListVerb {
	const char *name;			/* the verb, and the request's method */
	bool device;				/* takes an optional DEVICE filter */
	const char *const *columns;
	size_t n_columns;
	const char *const *arrays;		/* the reply's arrays listed, in order; NULL ends */
	/* fills line @l from element @o of the reply's array @array */
	void (*row)(struct libscols_line *l, json_object *o, const char *array);
	const char *noun;			/* legend "N nouns listed.", NULL: no legend */
	const char *(*legend_note)(json_object *reply);	/* after "listed", or NULL */
	void (*header)(json_object *reply, size_t n);	/* printed before the table, or NULL */
} ListVerb;

/* the verb: checks argc/argv, queries (--json: prints the reply), prints header, table and
 * legend; an exit code */
int list_verb(const ListVerb *v, int argc, char **argv);
/* the table alone, of @reply */
int list_table(const ListVerb *v, json_object *reply);
extern const ListVerb devices_list;

/* verbs: argc/argv are the verb's positional arguments (argv[0] is the verb) */
int verb_status(int argc, char **argv);
int verb_links(int argc, char **argv);
int verb_rails(int argc, char **argv);
int verb_devices(int argc, char **argv);
int verb_version(int argc, char **argv);
int verb_rail(int argc, char **argv);
int verb_sweep(int argc, char **argv);
int verb_fabric(int argc, char **argv);
int verb_peers(int argc, char **argv);
/* @s, or "-" when NULL or empty (a table cell) */
static inline const char *or_dash(const char *s)
{
	return s && s[0] ? s : "-";
}

int verb_routes(int argc, char **argv);
int verb_partitions(int argc, char **argv);
int verb_counters(int argc, char **argv);
int verb_eth(int argc, char **argv);
int verb_doctor(int argc, char **argv);
int verb_capture(int argc, char **argv);

int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
