/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The state socket's inspection methods "peers" and "counters" (docs/json.md): read-only views
 * built from the kernel model and the sweep's fabric, for tbctl peers / tbctl counters. */
#pragma once

#include <json-c/json.h>

#include "request.h"

json_object *inspect_peers(const RequestContext *c, const char *method, json_object *req);
json_object *inspect_counters(const RequestContext *c, const char *method, json_object *req);
