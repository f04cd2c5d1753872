// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of udev discovery's pure part (discovery.c): classification of hostile or missing
 * properties, idempotent add/change/remove, "service": false for a peer without our service. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "discovery.h"

/* a device: NULL-terminated key, value pairs */
static const char *get(void *ud, const char *key)
{
	const char *const *kv = ud;

	for (; kv[0]; kv += 2)
		if (!strcmp(kv[0], key))
			return kv[1];
	return NULL;
}

static int classify(const char *const *kv, DiscDevice *out)
{
	return disc_classify(get, (void *)kv, out);
}

static void test_xdomain(void **state)
{
	const char *const kv[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_xdomain",
		"SYSNAME", "0-1", "@unique_id", "a1b2c3d4-0000-1111-2222-333344445555\n",
		"@device_name", "Mac\x01" "Book\xff Pro\n", "@vendor_name", "Apple Inc.", NULL };
	DiscDevice d;

	(void)state;
	assert_int_equal(classify(kv, &d), 1);
	assert_int_equal(d.kind, DISC_XDOMAIN);
	assert_string_equal(d.name, "0-1");
	assert_string_equal(d.unique_id, "a1b2c3d4-0000-1111-2222-333344445555");
	/* control and non-ASCII bytes do not reach logs or JSON */
	assert_string_equal(d.device_name, "Mac?Book? Pro");
	assert_string_equal(d.vendor_name, "Apple Inc.");
}

static void test_service(void **state)
{
	const char *const ours[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_service",
		"SYSNAME", "0-1.1", "MODALIAS", "tbsvc:ktbrdmap00000001v00000001r00000001", NULL };
	const char *const by_key[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_service",
		"SYSNAME", "1-3.2", "@key", "tbrdma\n", NULL };
	const char *const net[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_service",
		"SYSNAME", "0-1.0", "MODALIAS", "tbsvc:knetworkp00000001v00000001r00000001",
		"@key", "tbrdmax", NULL };
	DiscDevice d;

	(void)state;
	assert_int_equal(classify(ours, &d), 1);
	assert_int_equal(d.kind, DISC_SERVICE);
	assert_string_equal(d.xdomain, "0-1");
	assert_true(d.ours);
	assert_int_equal(classify(by_key, &d), 1);
	assert_string_equal(d.xdomain, "1-3");
	assert_true(d.ours);
	assert_int_equal(classify(net, &d), 1);
	assert_false(d.ours);		/* the network service, and "tbrdmax" is not "tbrdma" */
}

static void test_link(void **state)
{
	const char *const kv[] = { "SUBSYSTEM", "tbrdma", "DEVTYPE", "tbrdma_link",
		"SYSNAME", "tbrdma1:link12", "@peer_guid", "02000000000000a1\n", "@state", "up\n",
		NULL };
	/* a remove event: no attributes at all */
	const char *const gone[] = { "SUBSYSTEM", "tbrdma", "DEVTYPE", "tbrdma_link",
		"SYSNAME", "tbrdma0:link1", NULL };
	DiscDevice d;

	(void)state;
	assert_int_equal(classify(kv, &d), 1);
	assert_int_equal(d.kind, DISC_LINK);
	assert_string_equal(d.device, "tbrdma1");
	assert_int_equal(d.link_id, 12);
	assert_true(d.peer_guid == 0x02000000000000a1ULL);
	assert_true(d.up);
	assert_int_equal(classify(gone, &d), 1);
	assert_int_equal(d.link_id, 1);
	assert_true(d.peer_guid == 0);
	assert_false(d.up);
}

static void test_ignored(void **state)
{
	const char *const rail[] = { "SUBSYSTEM", "tbrdma", "DEVTYPE", "tbrdma_rail",
		"SYSNAME", "tbrdma0:link1:rail0", NULL };
	const char *const dock[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_device",
		"SYSNAME", "0-1", NULL };
	const char *const domain[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_domain",
		"SYSNAME", "domain0", NULL };
	const char *const nothing[] = { NULL };
	const char *const no_devtype[] = { "SUBSYSTEM", "thunderbolt", "SYSNAME", "0-1", NULL };
	const char *const net[] = { "SUBSYSTEM", "net", "DEVTYPE", "thunderbolt_xdomain",
		"SYSNAME", "0-1", NULL };
	const char *const *all[] = { rail, dock, domain, nothing, no_devtype, net };
	DiscDevice d;

	(void)state;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		assert_int_equal(classify(all[i], &d), 0);
}

static void test_hostile(void **state)
{
	static char longname[200];
	const char *names_xd[] = { NULL, "", "0-1/../../x", "a b", "0-1\n", "\xc3\xa9", longname };
	const char *names_svc[] = { "0-1", ".1", "0-1.", "0-1/2.1" };
	const char *names_link[] = { "tbrdma0", "tbrdma0:link", "tbrdma0:link0", "tbrdma0:linkx",
		"tbrdma0:link99999999999", ":link1", "tbrdma0:rail1", "tbrdma0:link1x",
		"tbrdma0:link-1", "waytoolongdevicename_0123456789abcdef:link1" };
	DiscDevice d;

	(void)state;
	memset(longname, 'a', sizeof(longname) - 1);
	for (size_t i = 0; i < sizeof(names_xd) / sizeof(names_xd[0]); i++) {
		const char *kv[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_xdomain",
			"SYSNAME", names_xd[i], NULL };

		if (!names_xd[i])
			kv[4] = NULL;
		assert_int_equal(classify(kv, &d), -EINVAL);
	}
	for (size_t i = 0; i < sizeof(names_svc) / sizeof(names_svc[0]); i++) {
		const char *kv[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_service",
			"SYSNAME", names_svc[i], NULL };

		assert_int_equal(classify(kv, &d), -EINVAL);
	}
	for (size_t i = 0; i < sizeof(names_link) / sizeof(names_link[0]); i++) {
		const char *kv[] = { "SUBSYSTEM", "tbrdma", "DEVTYPE", "tbrdma_link",
			"SYSNAME", names_link[i], NULL };

		assert_int_equal(classify(kv, &d), -EINVAL);
	}
	/* bad peer_guid (too long, not hex, empty): 0, the link still counts */
	const char *guids[] = { "123456789abcdef01", "xyz", "", "-1" };
	for (size_t i = 0; i < sizeof(guids) / sizeof(guids[0]); i++) {
		const char *kv[] = { "SUBSYSTEM", "tbrdma", "DEVTYPE", "tbrdma_link",
			"SYSNAME", "tbrdma0:link3", "@peer_guid", guids[i], NULL };

		assert_int_equal(classify(kv, &d), 1);
		assert_true(d.peer_guid == 0);
	}
	/* a 100 KiB device_name is cut, not copied whole */
	static char huge[100000];
	memset(huge, 'N', sizeof(huge) - 1);
	const char *kv[] = { "SUBSYSTEM", "thunderbolt", "DEVTYPE", "thunderbolt_xdomain",
		"SYSNAME", "0-3", "@device_name", huge, NULL };
	assert_int_equal(classify(kv, &d), 1);
	assert_int_equal(strlen(d.device_name), DISC_TEXT_MAX - 1);
}

static DiscDevice dev(DiscKind kind, const char *name, const char *xdomain, bool ours)
{
	DiscDevice d;

	memset(&d, 0, sizeof(d));
	d.kind = kind;
	snprintf(d.name, sizeof(d.name), "%s", name);
	if (xdomain)
		snprintf(d.xdomain, sizeof(d.xdomain), "%s", xdomain);
	d.ours = ours;
	return d;
}

static bool peer_service(json_object *o, const char *name, bool *service)
{
	json_object *peers, *v;

	if (!json_object_object_get_ex(o, "thunderbolt_peers", &peers))
		return false;
	for (size_t i = 0; i < json_object_array_length(peers); i++) {
		json_object *p = json_object_array_get_idx(peers, i);

		json_object_object_get_ex(p, "name", &v);
		if (strcmp(json_object_get_string(v), name))
			continue;
		json_object_object_get_ex(p, "service", &v);
		*service = json_object_get_boolean(v);
		return true;
	}
	return false;
}

static void test_apply(void **state)
{
	Discovery d = { 0 };
	DiscDevice xd = dev(DISC_XDOMAIN, "0-1", NULL, false), svc = dev(DISC_SERVICE, "0-1.1", "0-1", true);
	DiscDevice other = dev(DISC_SERVICE, "0-1.0", "0-1", false), xd2 = dev(DISC_XDOMAIN, "0-3", NULL, false);
	DiscDevice link = dev(DISC_LINK, "tbrdma0:link1", NULL, false);
	json_object *o;
	bool service;

	(void)state;
	/* idempotent: a second add, a change with nothing new, a remove of the unknown */
	assert_int_equal(disc_apply(&d, DISC_ADD, &xd), 1);
	assert_int_equal(disc_apply(&d, DISC_ADD, &xd), 0);
	assert_int_equal(disc_apply(&d, DISC_CHANGE, &xd), 0);
	assert_int_equal(disc_apply(&d, DISC_REMOVE, &xd2), 0);
	assert_int_equal(d.n, 1);
	/* a peer with only someone else's service: service false */
	assert_int_equal(disc_apply(&d, DISC_ADD, &other), 1);
	assert_false(disc_xdomain_has_service(&d, "0-1"));
	o = json_object_new_object();
	disc_json(&d, o);
	assert_true(peer_service(o, "0-1", &service));
	assert_false(service);
	json_object_put(o);
	/* ours arrives (a change of an unknown device counts as an add) */
	assert_int_equal(disc_apply(&d, DISC_CHANGE, &svc), 1);
	assert_true(disc_xdomain_has_service(&d, "0-1"));
	assert_int_equal(disc_apply(&d, DISC_ADD, &xd2), 1);
	o = json_object_new_object();
	disc_json(&d, o);
	assert_true(peer_service(o, "0-1", &service));
	assert_true(service);
	assert_true(peer_service(o, "0-3", &service));
	assert_false(service);
	json_object_put(o);
	/* a change that changes something */
	link.up = false;
	assert_int_equal(disc_apply(&d, DISC_ADD, &link), 1);
	link.up = true;
	assert_int_equal(disc_apply(&d, DISC_CHANGE, &link), 1);
	assert_true(disc_find(&d, DISC_LINK, "tbrdma0:link1")->up);
	/* same name, other kind: distinct */
	assert_null(disc_find(&d, DISC_XDOMAIN, "tbrdma0:link1"));
	/* removing the XDomain takes its services along */
	assert_int_equal(disc_apply(&d, DISC_REMOVE, &xd), 1);
	assert_null(disc_find(&d, DISC_SERVICE, "0-1.1"));
	assert_null(disc_find(&d, DISC_SERVICE, "0-1.0"));
	assert_false(disc_xdomain_has_service(&d, "0-1"));
	assert_int_equal(d.n, 2);	/* 0-3 and the link */
	assert_int_equal(disc_apply(&d, DISC_REMOVE, &xd), 0);
	/* many devices: the array grows */
	for (int i = 0; i < 100; i++) {
		char n[32];

		snprintf(n, sizeof(n), "tbrdma0:link%d", i + 2);
		link = dev(DISC_LINK, n, NULL, false);
		assert_int_equal(disc_apply(&d, DISC_ADD, &link), 1);
	}
	assert_int_equal(d.n, 102);
	disc_clear(&d);
	assert_int_equal(d.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xdomain),
		cmocka_unit_test(test_service),
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_ignored),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_apply),
	};

	return cmocka_run_group_tests_name("tbrdmad_discovery", tests, NULL, NULL);
}
