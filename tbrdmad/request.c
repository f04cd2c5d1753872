// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Request parser/dispatcher of the state socket (docs/json.md). Input is untrusted bytes from any
 * local user: strict JSON (json-c strict mode, UTF-8 validated, depth-limited), one object with a
 * string "method"; anything else gets an error object. Changing methods need uid 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"
#include "json.h"
#include "protocol.h"
#include "request.h"
#include "util.h"

#define JSON_DEPTH 16

typedef json_object *(*method_fn)(const RequestContext *c, const char *method, json_object *req);

static json_object *m_version(const RequestContext *c, const char *method, json_object *req)
{
	json_object *o = json_reply_new(method);

	(void)req;
	json_object_object_add(o, "daemon", json_object_new_string("tbrdmad"));
	json_object_object_add(o, "version", json_object_new_string(c->info->version));
	json_object_object_add(o, "schema_version", json_object_new_int(TBRDMAD_SCHEMA));
	return o;
}

static json_object *summary(const Model *m)
{
	json_object *o = json_object_new_object();
	size_t links_up = 0, rails_up = 0, held = 0;
	json_object *notes = json_object_new_array();

	for (size_t i = 0; i < m->n_links; i++) {
		links_up += m->links[i].up;
		if (m->links[i].trust) {	/* held or rejected: "DEV link N: NOTE" */
			json_object *l = json_link(&m->links[i]), *n;
			char t[160];

			held++;
			if (json_object_object_get_ex(l, "trust_note", &n)) {
				snprintf(t, sizeof(t), "%s link %u: %s", m->links[i].device,
					 m->links[i].id, json_object_get_string(n));
				json_object_array_add(notes, json_object_new_string(t));
			}
			json_object_put(l);
		}
	}
	for (size_t i = 0; i < m->n_rails; i++)
		rails_up += m->rails[i].up;
	json_object_object_add(o, "devices", json_object_new_int64(m->n_devices));
	json_object_object_add(o, "links", json_object_new_int64(m->n_links));
	json_object_object_add(o, "links_up", json_object_new_int64(links_up));
	json_object_object_add(o, "links_held", json_object_new_int64(held));
	json_object_object_add(o, "held", notes);
	json_object_object_add(o, "rails", json_object_new_int64(m->n_rails));
	json_object_object_add(o, "rails_up", json_object_new_int64(rails_up));
	return o;
}

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *devices_array(const Model *m)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < m->n_devices; i++)
		json_object_array_add(a, json_device(&m->devices[i]));
	return a;
}

static json_object *m_status(const RequestContext *c, const char *method, json_object *req)
{
	const DaemonInfo *in = c->info;
	json_object *o = json_reply_new(method), *d, *k;

	(void)req;
	d = json_object_new_object();
	json_object_object_add(d, "version", json_object_new_string(in->version));
	json_object_object_add(d, "pid", json_object_new_int64(in->pid));
	json_object_object_add(d, "uptime_sec", json_object_new_uint64(in->uptime_usec / 1000000));
	json_object_object_add(d, "clients", json_object_new_int64(in->clients));
	json_object_object_add(d, "output_peak", json_object_new_uint64(in->output_peak));
	json_object_object_add(d, "device_filter", str_or_null(in->device_filter));
	json_object_object_add(o, "daemon", d);

	k = json_object_new_object();
	json_object_object_add(k, "present", json_object_new_boolean(in->kernel_present));
	json_object_object_add(k, "family", str_or_null(in->family));
	json_object_object_add(k, "syncs", json_object_new_uint64(in->syncs));
	json_object_object_add(k, "sync_errors", json_object_new_uint64(in->sync_errors));
	json_object_object_add(k, "events", json_object_new_uint64(in->events));
	json_object_object_add(k, "last_sync_usec",
			       in->last_sync_usec ? json_object_new_uint64(in->last_sync_usec) : NULL);
	json_object_object_add(k, "error", str_or_null(in->kernel_error));
	json_object_object_add(o, "kernel", k);

	if (in->udev_state) {
		json_object *u = json_object_new_object();

		json_object_object_add(u, "state", json_object_new_string(in->udev_state));
		json_object_object_add(u, "events", json_object_new_uint64(in->udev_events));
		if (in->discovery)
			disc_json(in->discovery, u);
		json_object_object_add(o, "udev", u);
	}

	json_object_object_add(o, "summary", summary(c->model));
	json_object_object_add(o, "devices", devices_array(c->model));
	return o;
}

static json_object *m_devices(const RequestContext *c, const char *method, json_object *req)
{
	json_object *o = json_reply_new(method);

	(void)req;
	json_object_object_add(o, "devices", devices_array(c->model));
	return o;
}

int request_device_param(json_object *req, const char *method, bool required,
			 const char **dev, json_object **err)
{
	json_object *v;
	const char *s;

	*dev = NULL;
	if (!json_object_object_get_ex(req, "device", &v) || json_object_is_type(v, json_type_null)) {
		if (!required)
			return 0;
		*err = json_error_new(method, ERR_INVALID, "\"device\" (string) is required");
		return -EINVAL;
	}
	if (!json_object_is_type(v, json_type_string)) {
		*err = json_error_new(method, ERR_INVALID, "\"device\" must be a string");
		return -EINVAL;
	}
	s = json_object_get_string(v);
	if (!s[0] || strlen(s) >= MODEL_NAME_MAX || strlen(s) != (size_t)json_object_get_string_len(v)) {
		*err = json_error_new(method, ERR_INVALID, "\"device\" must be 1..%d characters",
				      MODEL_NAME_MAX - 1);
		return -EINVAL;
	}
	*dev = s;
	return 0;
}

static int get_uint_param(json_object *req, const char *method, const char *key, int64_t min,
			  int64_t max, uint32_t *out, json_object **err)
{
	json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(req, key, &v)) {
		*err = json_error_new(method, ERR_INVALID, "\"%s\" (integer) is required", key);
		return -EINVAL;
	}
	if (!json_object_is_type(v, json_type_int)) {
		*err = json_error_new(method, ERR_INVALID, "\"%s\" must be an integer", key);
		return -EINVAL;
	}
	errno = 0;
	x = json_object_get_int64(v);
	if (errno || x < min || x > max) {
		*err = json_error_new(method, ERR_INVALID, "\"%s\" must be %lld..%lld", key,
				      (long long)min, (long long)max);
		return -ERANGE;
	}
	*out = (uint32_t)x;
	return 0;
}

static json_object *m_links(const RequestContext *c, const char *method, json_object *req)
{
	json_object *o, *a, *err = NULL;
	const char *dev;

	if (request_device_param(req, method, false, &dev, &err) < 0)
		return err;
	o = json_reply_new(method);
	a = json_object_new_array();
	for (size_t i = 0; i < c->model->n_links; i++) {
		const Link *l = &c->model->links[i];
		json_object *lo;

		if (dev && strcmp(dev, l->device))
			continue;
		lo = json_link(l);
		if (c->ops && c->ops->link_json)
			c->ops->link_json(c->userdata, l, lo);
		json_object_array_add(a, lo);
	}
	json_object_object_add(o, "links", a);
	return o;
}

static json_object *m_rails(const RequestContext *c, const char *method, json_object *req)
{
	json_object *o, *a, *err = NULL;
	const char *dev;

	if (request_device_param(req, method, false, &dev, &err) < 0)
		return err;
	o = json_reply_new(method);
	a = json_object_new_array();
	for (size_t i = 0; i < c->model->n_rails; i++)
		if (!dev || !strcmp(dev, c->model->rails[i].device))
			json_object_array_add(a, json_rail(&c->model->rails[i]));
	json_object_object_add(o, "rails", a);
	return o;
}

static json_object *rail_set(const RequestContext *c, const char *method, json_object *req,
			     bool cut)
{
	json_object *err = NULL, *o;
	const char *dev;
	uint32_t link, rail;
	const Rail *r;
	char msg[256] = "";
	int k;

	if (request_device_param(req, method, true, &dev, &err) < 0 ||
	    get_uint_param(req, method, "link", 1, UINT32_MAX, &link, &err) < 0 ||
	    get_uint_param(req, method, "rail", 0, TBRDMA_RAILS_MAX - 1, &rail, &err) < 0)
		return err;
	if (!c->info->kernel_present)
		return json_error_new(method, ERR_UNAVAILABLE, "the tbrdma kernel module is not loaded");
	if (c->info->device_filter && strcmp(c->info->device_filter, dev))
		return json_error_new(method, ERR_NOT_FOUND,
				      "this daemon manages %s only", c->info->device_filter);
	if (!model_find_device(c->model, dev))
		return json_error_new(method, ERR_NOT_FOUND, "no device %s", dev);
	r = model_find_rail(c->model, dev, link, rail);
	if (!r)
		return json_error_new(method, ERR_NOT_FOUND, "no rail %s link %u rail %u", dev,
				      link, rail);
	if (!c->ops || !c->ops->rail_set_cut)
		return json_error_new(method, ERR_INTERNAL, "not supported");
	k = c->ops->rail_set_cut(c->userdata, dev, link, rail, cut, msg, sizeof(msg));
	if (k < 0) {
		o = json_error_new(method, ERR_KERNEL, "%s%s%s", strerror(-k), msg[0] ? ": " : "", msg);
		json_error_set_errno(o, k);
		return o;
	}
	o = json_reply_new(method);
	/* the rail as the kernel shows it after the change (the op re-synced the model) */
	r = model_find_rail(c->model, dev, link, rail);
	json_object_object_add(o, "rail", r ? json_rail(r) : NULL);
	return o;
}

static json_object *m_rail_disable(const RequestContext *c, const char *method, json_object *req)
{
	return rail_set(c, method, req, true);
}

static json_object *m_rail_enable(const RequestContext *c, const char *method, json_object *req)
{
	return rail_set(c, method, req, false);
}

static json_object *m_sweep(const RequestContext *c, const char *method, json_object *req)
{
	char msg[256] = "";
	json_object *o;
	int k;

	(void)req;
	if (!c->ops || !c->ops->sweep)
		return json_error_new(method, ERR_INTERNAL, "not supported");
	k = c->ops->sweep(c->userdata, msg, sizeof(msg));
	if (k < 0) {
		o = json_error_new(method, k == -ENOENT ? ERR_UNAVAILABLE : ERR_KERNEL, "%s",
				   msg[0] ? msg : strerror(-k));
		json_error_set_errno(o, k);
		return o;
	}
	o = json_reply_new(method);
	json_object_object_add(o, "summary", summary(c->model));
	return o;
}

/* a reply the sweep fills (@op, NULL when the manager has none) */
static json_object *sweep_reply(const RequestContext *c, const char *method,
				int (*op)(void *userdata, json_object *reply))
{
	json_object *o;

	if (!op)
		return json_error_new(method, ERR_UNAVAILABLE, "the sweep is not running");
	o = json_reply_new(method);
	if (op(c->userdata, o) < 0) {
		json_object_put(o);
		return json_error_new(method, ERR_UNAVAILABLE, "the sweep is disabled (Sweep=no)");
	}
	return o;
}

static json_object *m_fabric(const RequestContext *c, const char *method, json_object *req)
{
	(void)req;
	return sweep_reply(c, method, c->ops ? c->ops->fabric : NULL);
}

static json_object *m_routes(const RequestContext *c, const char *method, json_object *req)
{
	(void)req;
	return sweep_reply(c, method, c->ops ? c->ops->routes : NULL);
}

static json_object *m_partitions(const RequestContext *c, const char *method, json_object *req)
{
	(void)req;
	return sweep_reply(c, method, c->ops ? c->ops->partitions : NULL);
}

static const struct {
	const char *name;
	bool privileged;
	method_fn fn;
} methods[] = {
	{ "version", false, m_version },
	{ "status", false, m_status },
	{ "devices", false, m_devices },
	{ "links", false, m_links },
	{ "rails", false, m_rails },
	{ "rail-disable", true, m_rail_disable },
	{ "rail-enable", true, m_rail_enable },
	{ "sweep", true, m_sweep },
	{ "fabric", false, m_fabric },
	{ "routes", false, m_routes },
	{ "partitions", false, m_partitions },
	{ "peers", false, inspect_peers },
	{ "counters", false, inspect_counters },
};

static bool all_space(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			return false;
	return true;
}

/*
 * Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. json-c's own
 * check lets those through, and a method or id holding them would be echoed into a reply that is
 * not valid UTF-8 (found by tests/bats/sock-stress.py).
 */
static bool utf8_valid(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = p[i];
		unsigned char lo = 0x80, hi = 0xbf;
		size_t more;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			more = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			more = 2;
			if (c == 0xe0)
				lo = 0xa0;	/* overlong */
			else if (c == 0xed)
				hi = 0x9f;	/* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			more = 3;
			if (c == 0xf0)
				lo = 0x90;	/* overlong */
			else if (c == 0xf4)
				hi = 0x8f;	/* above U+10FFFF */
		} else {
			return false;
		}
		if (n - i <= more)
			return false;
		if (p[i + 1] < lo || p[i + 1] > hi)
			return false;
		for (size_t k = 2; k <= more; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
		i += more + 1;
	}
	return true;
}

static json_object *parse(const char *line, size_t len, json_object **err)
{
	struct json_tokener *tok;
	enum json_tokener_error e;
	json_object *o;
	size_t end;

	if (len > TBRDMAD_LINE_MAX) {
		*err = json_error_new(NULL, ERR_TOO_LARGE, "request longer than %d bytes",
				      TBRDMAD_LINE_MAX);
		return NULL;
	}
	if (memchr(line, '\0', len)) {
		*err = json_error_new(NULL, ERR_PARSE, "NUL byte in request");
		return NULL;
	}
	if (!utf8_valid((const unsigned char *)line, len)) {
		*err = json_error_new(NULL, ERR_PARSE, "invalid UTF-8");
		return NULL;
	}
	tok = json_tokener_new_ex(JSON_DEPTH);
	if (!tok)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!o && e == json_tokener_continue) {
		/* a top-level literal or number ends at the end of the line: tell the tokener so
		 * by feeding the terminating NUL (the line itself has none, checked above) */
		o = json_tokener_parse_ex(tok, "", 1);
		e = json_tokener_get_error(tok);
		end = len;
	}
	json_tokener_free(tok);
	if (!o && e == json_tokener_success) {
		/* the JSON value null */
		*err = json_error_new(NULL, ERR_INVALID, "a request is a JSON object");
		return NULL;
	}
	if (!o || e != json_tokener_success) {
		json_object_put(o);
		*err = json_error_new(NULL, ERR_PARSE, "not valid JSON: %s",
				      e == json_tokener_continue ? "incomplete" :
				      json_tokener_error_desc(e));
		return NULL;
	}
	if (end < len && !all_space(line + end, len - end)) {
		json_object_put(o);
		*err = json_error_new(NULL, ERR_PARSE, "not valid JSON: data after the request object");
		return NULL;
	}
	return o;
}

json_object *request_handle(const RequestContext *c, const char *line, size_t len)
{
	_cleanup_json_ json_object *req = NULL;
	json_object *reply = NULL, *v, *id = NULL;
	const char *method;

	req = parse(line, len, &reply);
	if (!req)
		return reply;
	if (!json_object_is_type(req, json_type_object))
		return json_error_new(NULL, ERR_INVALID, "a request is a JSON object");
	if (json_object_object_get_ex(req, "id", &v))
		id = v;
	if (!json_object_object_get_ex(req, "method", &v) || !json_object_is_type(v, json_type_string)) {
		reply = json_error_new(NULL, ERR_INVALID, "\"method\" (string) is required");
		goto out;
	}
	method = json_object_get_string(v);
	for (size_t i = 0; i < ELEMENTSOF(methods); i++) {
		if (strcmp(method, methods[i].name) ||
		    strlen(method) != (size_t)json_object_get_string_len(v))
			continue;
		if (methods[i].privileged && c->uid != 0)
			reply = json_error_new(method, ERR_PERMISSION,
					       "\"%s\" changes state and needs root", method);
		else
			reply = methods[i].fn(c, methods[i].name, req);
		goto out;
	}
	reply = json_error_new(NULL, ERR_UNKNOWN_METHOD, "unknown method");
	json_object_object_add(reply, "method", json_object_get(v));
out:
	if (reply && id)
		json_object_object_add(reply, "id", json_object_get(id));
	return reply;
}

char *reply_to_line(json_object *reply, size_t *len)
{
	const char *s;
	size_t n;
	char *line;

	s = json_object_to_json_string_length(reply, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (!s)
		return NULL;
	line = malloc(n + 2);
	if (!line)
		return NULL;
	memcpy(line, s, n);
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
	return line;
}
