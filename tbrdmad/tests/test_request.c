// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the state socket's request parser/dispatcher (request.c) with a fake model and
 * fake changing operations: no socket, no kernel. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"
#include "protocol.h"
#include "request.h"

static Model model;
static DaemonInfo info;
static struct {
	int calls;
	char device[32];
	uint32_t link, rail;
	bool cut;
	int ret;
} op;

static int fake_rail_set(void *ud, const char *device, uint32_t link, uint32_t rail, bool cut,
			 char *msg, size_t msglen)
{
	(void)ud;
	op.calls++;
	snprintf(op.device, sizeof(op.device), "%s", device);
	op.link = link;
	op.rail = rail;
	op.cut = cut;
	if (op.ret)
		snprintf(msg, msglen, "kernel says no");
	else
		model.rails[0].cut = cut, model.rails[0].up = !cut;
	return op.ret;
}

static int fake_sweep(void *ud, char *msg, size_t msglen)
{
	(void)ud; (void)msg; (void)msglen;
	op.calls++;
	return 0;
}

static const RequestOps ops = { .rail_set_cut = fake_rail_set, .sweep = fake_sweep };

static int setup(void **state)
{
	Device *d;
	Link *l;
	Rail *r;

	(void)state;
	memset(&op, 0, sizeof(op));
	model_clear(&model);
	d = model_add_device(&model);
	snprintf(d->name, sizeof(d->name), "tbrdma0");
	snprintf(d->netdev, sizeof(d->netdev), "tbr0");
	d->guid = 0x0011223344556677ULL;
	d->host = true;
	d->links = 1;
	d->rails_up = 1;
	l = model_add_link(&model);
	snprintf(l->device, sizeof(l->device), "tbrdma0");
	l->id = 1;
	l->peer_guid = 0xaabbccddeeff0011ULL;
	l->up = true;
	l->rails_up = l->rails_total = 1;
	l->counters.present = 1u << TBRDMA_STAT_TX_FRAMES;
	l->counters.v[TBRDMA_STAT_TX_FRAMES] = UINT64_MAX;	/* u64 survives JSON */
	r = model_add_rail(&model);
	snprintf(r->device, sizeof(r->device), "tbrdma0");
	r->link = 1;
	r->id = 0;
	snprintf(r->backend, sizeof(r->backend), "emu");
	r->up = true;
	r->has_knobs = true;
	info = (DaemonInfo){ .version = "test", .pid = 1, .family = "tbrdma", .kernel_present = true };
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	model_clear(&model);
	return 0;
}

static json_object *run_as(uid_t uid, const char *line)
{
	RequestContext c = { .uid = uid, .model = &model, .info = &info, .ops = &ops };
	json_object *o = request_handle(&c, line, strlen(line));
	json_object *v;

	assert_non_null(o);
	/* every reply: an object with schema 1 and a boolean ok */
	assert_true(json_object_is_type(o, json_type_object));
	assert_true(json_object_object_get_ex(o, "schema", &v));
	assert_int_equal(json_object_get_int(v), TBRDMAD_SCHEMA);
	assert_true(json_object_object_get_ex(o, "ok", &v));
	assert_true(json_object_is_type(v, json_type_boolean));
	return o;
}

static json_object *run(const char *line)
{
	return run_as(0, line);
}

static const char *err_code(json_object *o)
{
	json_object *e, *c;

	if (!json_object_object_get_ex(o, "error", &e) || !json_object_object_get_ex(e, "code", &c))
		return "";
	return json_object_get_string(c);
}

static bool ok(json_object *o)
{
	json_object *v;

	return json_object_object_get_ex(o, "ok", &v) && json_object_get_boolean(v);
}

#define EXPECT_ERROR(line, code) do { \
	json_object *_o = run(line); \
	assert_false(ok(_o)); \
	assert_string_equal(err_code(_o), code); \
	json_object_put(_o); \
} while (0)

static void test_version(void **state)
{
	json_object *o = run("{\"method\":\"version\"}"), *v;

	(void)state;
	assert_true(ok(o));
	assert_true(json_object_object_get_ex(o, "version", &v));
	assert_string_equal(json_object_get_string(v), "test");
	json_object_put(o);
}

static void test_status(void **state)
{
	json_object *o = run("{\"method\":\"status\"}"), *s, *v;

	(void)state;
	assert_true(ok(o));
	assert_true(json_object_object_get_ex(o, "summary", &s));
	assert_true(json_object_object_get_ex(s, "links_up", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(o, "devices", &v));
	assert_int_equal(json_object_array_length(v), 1);
	json_object_put(o);
}

static void test_links_counters(void **state)
{
	json_object *o = run("{\"method\":\"links\"}"), *a, *l, *c, *v;

	(void)state;
	assert_true(ok(o));
	assert_true(json_object_object_get_ex(o, "links", &a));
	assert_int_equal(json_object_array_length(a), 1);
	l = json_object_array_get_idx(a, 0);
	assert_true(json_object_object_get_ex(l, "peer_guid", &v));
	assert_string_equal(json_object_get_string(v), "aabbccddeeff0011");
	assert_true(json_object_object_get_ex(l, "counters", &c));
	assert_true(json_object_object_get_ex(c, "tx_frames", &v));
	assert_true(json_object_get_uint64(v) == UINT64_MAX);
	assert_true(json_object_object_get_ex(c, "mgmt_rx", &v));
	json_object_put(o);
	/* filter */
	o = run("{\"method\":\"links\",\"device\":\"tbrdma9\"}");
	assert_true(json_object_object_get_ex(o, "links", &a));
	assert_int_equal(json_object_array_length(a), 0);
	json_object_put(o);
}

static void test_rails_devices(void **state)
{
	json_object *o = run("{\"method\":\"rails\",\"device\":\"tbrdma0\"}"), *a;

	(void)state;
	assert_true(ok(o));
	assert_true(json_object_object_get_ex(o, "rails", &a));
	assert_int_equal(json_object_array_length(a), 1);
	json_object_put(o);
	o = run("{\"method\":\"devices\"}");
	assert_true(ok(o));
	json_object_put(o);
}

static void test_id_echo(void **state)
{
	json_object *o = run("{\"id\":\"abc\",\"method\":\"version\"}"), *v;

	(void)state;
	assert_true(json_object_object_get_ex(o, "id", &v));
	assert_string_equal(json_object_get_string(v), "abc");
	json_object_put(o);
	o = run("{\"id\":42,\"method\":\"nope\"}");
	assert_true(json_object_object_get_ex(o, "id", &v));
	assert_int_equal(json_object_get_int(v), 42);
	json_object_put(o);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"{", "}", "{bad", "nul", "{\"method\":\"status\"", "{'method':'status'}",
		"{\"method\":\"status\"} x", "{\"method\":\"status\"}{}", "\xff\xfe",
		"{\"method\":\"\xc3\x28\"}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
		"01", "{\"method\":\"status\",}", "tru",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_ERROR(bad[i], ERR_PARSE);
}

static void test_utf8(void **state)
{
	static const char *const bad[] = {
		"{\"method\":\"ver\xc0\xafsion\"}",		/* overlong '/' */
		"{\"method\":\"\xe0\x80\xaf\"}",		/* overlong, 3 bytes */
		"{\"method\":\"\xf0\x80\x80\xaf\"}",		/* overlong, 4 bytes */
		"{\"method\":\"\xed\xa0\x80\"}",		/* surrogate U+D800 */
		"{\"method\":\"\xf4\x90\x80\x80\"}",		/* U+110000 */
		"{\"method\":\"\xf5\x80\x80\x80\"}",
		"{\"method\":\"status\",\"id\":\"\xe2\x82\"}",	/* truncated */
		"{\"method\":\"status\",\"id\":\"\x80\"}",	/* lone continuation */
		"{\"method\":\"status\"}\xc3",		/* cut at the end of the line */
	};
	json_object *o, *v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_ERROR(bad[i], ERR_PARSE);
	/* the longest valid forms pass: U+10FFFF, U+FFFF, U+D7FF, U+0080 */
	o = run("{\"method\":\"version\",\"id\":\"\xf4\x8f\xbf\xbf\xef\xbf\xbf\xed\x9f\xbf\xc2\x80\"}");
	assert_true(ok(o));
	assert_true(json_object_object_get_ex(o, "id", &v));
	assert_string_equal(json_object_get_string(v), "\xf4\x8f\xbf\xbf\xef\xbf\xbf\xed\x9f\xbf\xc2\x80");
	json_object_put(o);
}

static void test_nul_byte(void **state)
{
	RequestContext c = { .uid = 0, .model = &model, .info = &info, .ops = &ops };
	static const char line[] = "{\"method\":\"status\"}\0garbage";
	json_object *o = request_handle(&c, line, sizeof(line) - 1);

	(void)state;
	assert_false(ok(o));
	assert_string_equal(err_code(o), ERR_PARSE);
	json_object_put(o);
}

static void test_invalid(void **state)
{
	(void)state;
	EXPECT_ERROR("[]", ERR_INVALID);
	EXPECT_ERROR("null", ERR_INVALID);
	EXPECT_ERROR("\"str\"", ERR_INVALID);
	EXPECT_ERROR("true", ERR_INVALID);
	EXPECT_ERROR("1", ERR_INVALID);
	EXPECT_ERROR(" 1.5 ", ERR_INVALID);
	EXPECT_ERROR("{}", ERR_INVALID);
	EXPECT_ERROR("{\"method\":5}", ERR_INVALID);
	EXPECT_ERROR("{\"method\":null}", ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"links\",\"device\":[]}", ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"links\",\"device\":\"\"}", ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"links\",\"device\":\"0123456789012345678901234567890123\"}",
		     ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\"}", ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1}", ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":0,\"rail\":0}",
		     ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":16}",
		     ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":-1}",
		     ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1.5,\"rail\":0}",
		     ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":\"1\",\"rail\":0}",
		     ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\","
		     "\"link\":99999999999999999999999,\"rail\":0}", ERR_INVALID);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":4294967296,\"rail\":0}",
		     ERR_INVALID);
	assert_int_equal(op.calls, 0);
}

static void test_unknown(void **state)
{
	(void)state;
	EXPECT_ERROR("{\"method\":\"reboot\"}", ERR_UNKNOWN_METHOD);
	EXPECT_ERROR("{\"method\":\"\"}", ERR_UNKNOWN_METHOD);
	EXPECT_ERROR("{\"method\":\"STATUS\"}", ERR_UNKNOWN_METHOD);
	/* an embedded NUL in the method string is not "status" */
	EXPECT_ERROR("{\"method\":\"status\\u0000x\"}", ERR_UNKNOWN_METHOD);
}

static void test_too_large(void **state)
{
	RequestContext c = { .uid = 0, .model = &model, .info = &info, .ops = &ops };
	size_t n = TBRDMAD_LINE_MAX + 1;
	char *line = malloc(n);
	json_object *o;

	(void)state;
	memset(line, ' ', n);
	memcpy(line, "{\"method\":\"status\"}", 19);
	o = request_handle(&c, line, n);
	assert_string_equal(err_code(o), ERR_TOO_LARGE);
	json_object_put(o);
	/* exactly the limit is fine (trailing spaces) */
	o = request_handle(&c, line, n - 1);
	assert_true(ok(o));
	json_object_put(o);
	free(line);
}

static void test_permission(void **state)
{
	static const char *const changing[] = {
		"{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":0}",
		"{\"method\":\"rail-enable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":0}",
		"{\"method\":\"sweep\"}",
	};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		json_object *o = run_as(65534, changing[i]);

		assert_false(ok(o));
		assert_string_equal(err_code(o), ERR_PERMISSION);
		json_object_put(o);
	}
	assert_int_equal(op.calls, 0);
	/* reads are fine for everyone */
	json_object *o = run_as(65534, "{\"method\":\"rails\"}");
	assert_true(ok(o));
	json_object_put(o);
}

static void test_rail_set(void **state)
{
	json_object *o, *r, *v;

	(void)state;
	o = run("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":0}");
	assert_true(ok(o));
	assert_int_equal(op.calls, 1);
	assert_string_equal(op.device, "tbrdma0");
	assert_int_equal(op.link, 1);
	assert_int_equal(op.rail, 0);
	assert_true(op.cut);
	assert_true(json_object_object_get_ex(o, "rail", &r));
	assert_true(json_object_object_get_ex(r, "cut", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(o);
	o = run("{\"method\":\"rail-enable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":0}");
	assert_true(ok(o));
	assert_false(op.cut);
	json_object_put(o);
	/* the kernel refuses: errno and its message */
	op.ret = -EOPNOTSUPP;
	o = run("{\"method\":\"rail-enable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":0}");
	assert_string_equal(err_code(o), ERR_KERNEL);
	assert_non_null(strstr(json_object_to_json_string(o), "kernel says no"));
	assert_non_null(strstr(json_object_to_json_string(o), "EOPNOTSUPP"));
	json_object_put(o);
}

static void test_rail_set_not_found(void **state)
{
	(void)state;
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma7\",\"link\":1,\"rail\":0}",
		     ERR_NOT_FOUND);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":2,\"rail\":0}",
		     ERR_NOT_FOUND);
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":3}",
		     ERR_NOT_FOUND);
	info.device_filter = "tbrdma1";
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":0}",
		     ERR_NOT_FOUND);
	info.device_filter = NULL;
	info.kernel_present = false;
	EXPECT_ERROR("{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":0}",
		     ERR_UNAVAILABLE);
	assert_int_equal(op.calls, 0);
}

static void test_sweep(void **state)
{
	json_object *o = run("{\"method\":\"sweep\"}");

	(void)state;
	assert_true(ok(o));
	assert_int_equal(op.calls, 1);
	json_object_put(o);
}

static void test_reply_line(void **state)
{
	json_object *o = run("{\"method\":\"status\",\"id\":\"a\\nb\"}");
	size_t len;
	char *line = reply_to_line(o, &len);

	(void)state;
	assert_non_null(line);
	assert_int_equal(line[len - 1], '\n');
	assert_null(memchr(line, '\n', len - 1));	/* one line, whatever the content */
	free(line);
	json_object_put(o);
}

/* deterministic pseudo-random garbage and mutations of valid requests: never NULL, never crash */
static void test_random(void **state)
{
	static const char *const seeds[] = {
		"{\"method\":\"rail-disable\",\"device\":\"tbrdma0\",\"link\":1,\"rail\":0}",
		"{\"method\":\"links\",\"device\":\"tbrdma0\",\"id\":[1,{\"a\":null}]}",
		"{\"method\":\"status\"}",
	};
	uint64_t x = 88172645463325252ULL;
	char buf[256];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		const char *s = seeds[i % 3];
		size_t n = strlen(s);
		json_object *o;

		memcpy(buf, s, n);
		for (int k = 0; k < 1 + i % 4; k++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			buf[x % n] = (char)(x >> 24);
		}
		o = run(buf[0] ? buf : "{}");
		json_object_put(o);
	}
	model.rails[0].cut = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rails_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_id_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rail_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rail_set_not_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random, setup, teardown),
	};

	return cmocka_run_group_tests_name("tbrdmad_request", tests, NULL, NULL);
}
