/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* JSON shapes of the state socket (docs/json.md): replies, errors, model objects. */
#pragma once

#include <json-c/json.h>

#include "model.h"

static inline void json_object_putp(json_object **j)
{
	if (*j)
		json_object_put(*j);
}
#define _cleanup_json_ __attribute__((cleanup(json_object_putp)))

/* {"schema":1,"ok":true,"method":METHOD} (method omitted when NULL) */
json_object *json_reply_new(const char *method);
/* {"schema":1,"ok":false,"method":METHOD,"error":{"code":CODE,"message":...}} */
json_object *json_error_new(const char *method, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* adds "errno": NAME ("EPERM") and "errno_value": N to an error reply's "error" object */
void json_error_set_errno(json_object *reply, int err);

void guid_to_string(uint64_t guid, char buf[static 17]);	/* 16 lowercase hex digits */
json_object *json_counters(const Counters *c);
json_object *json_device(const Device *d);
json_object *json_link(const Link *l);
json_object *json_rail(const Rail *r);
