// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the configuration parser (config.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "protocol.h"

static void test_defaults(void **state)
{
	Config c;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_string_equal(c.socket_path, TBRDMAD_SOCKET);
	assert_string_equal(c.state_dir, TBRDMAD_STATE_DIR);
	assert_null(c.device);
	assert_int_equal(c.socket_mode, 0666);
	assert_int_equal(c.refresh_usec, 2000000);
	assert_int_equal(c.retry_usec, 1000000);
	assert_int_equal(c.max_clients, 256);
	assert_int_equal(c.max_clients_per_user, 16);
	assert_string_equal(c.family, "tbrdma");
	/* a missing file is fine */
	assert_int_equal(config_load(&c, "/nonexistent/tbrdmad.conf"), 0);
	assert_string_equal(c.socket_path, TBRDMAD_SOCKET);
	config_done(&c);
}

static void test_parse(void **state)
{
	Config c;

	(void)state;
	config_init(&c);
	assert_int_equal(config_parse_string(&c,
		"# comment\n"
		"; another\n"
		"[Daemon]\n"
		"Socket = /tmp/x.sock\n"
		"SocketMode=0660\n"
		"StateDirectory=/tmp/state\n"
		"Device=tbrdma1\n"
		"RefreshSec=0.5\n"
		"RetrySec=3\n"
		"MaxClients=10\n"
		"MaxClientsPerUser=3\n"
		"FabricKeyFile=/etc/tbrdmad/fabric.key\n"
		"MapKeepDays=7\n"
		"LogLevel=debug\n", "t"), 0);
	assert_string_equal(c.socket_path, "/tmp/x.sock");
	assert_int_equal(c.socket_mode, 0660);
	assert_string_equal(c.state_dir, "/tmp/state");
	assert_string_equal(c.device, "tbrdma1");
	assert_int_equal(c.refresh_usec, 500000);
	assert_int_equal(c.retry_usec, 3000000);
	assert_int_equal(c.max_clients, 10);
	assert_int_equal(c.max_clients_per_user, 3);
	assert_string_equal(c.fabric_key_file, "/etc/tbrdmad/fabric.key");
	assert_int_equal(c.map_keep_days, 7);
	assert_int_equal(c.log_level, LOG_DEBUG);
	/* FabricKeyFile= empty: no key */
	config_parse_string(&c, "FabricKeyFile=\n", "t");
	assert_string_equal(c.fabric_key_file, "");
	/* Device= empty: back to every device */
	config_parse_string(&c, "Device=\n", "t");
	assert_null(c.device);
	config_done(&c);
}

static void test_bad_values_ignored(void **state)
{
	Config c;

	(void)state;
	log_set_max_level(LOG_EMERG);	/* the warnings are expected */
	config_init(&c);
	assert_int_equal(config_parse_string(&c,
		"Socket=relative\n"
		"SocketMode=999\n"
		"RefreshSec=0\n"
		"RetrySec=abc\n"
		"MaxClients=0\n"
		"MaxClientsPerUser=0\n"
		"MaxClients=-5\n"
		"FabricKeyFile=relative.key\n"
		"MapKeepDays=0\n"
		"LogLevel=loud\n"
		"Unknown=1\n"
		"no equals sign\n"
		"[Other]\n"
		"Socket=/tmp/other.sock\n"
		"[broken\n", "t"), 0);
	assert_string_equal(c.socket_path, TBRDMAD_SOCKET);
	assert_int_equal(c.socket_mode, 0666);
	assert_int_equal(c.refresh_usec, 2000000);
	assert_int_equal(c.retry_usec, 1000000);
	assert_int_equal(c.max_clients, 256);
	assert_int_equal(c.max_clients_per_user, 16);
	assert_null(c.fabric_key_file);
	assert_int_equal(c.map_keep_days, 30);
	assert_int_equal(c.log_level, LOG_INFO);
	config_done(&c);
	log_set_max_level(LOG_INFO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_bad_values_ignored),
	};

	return cmocka_run_group_tests_name("tbrdmad_config", tests, NULL, NULL);
}
