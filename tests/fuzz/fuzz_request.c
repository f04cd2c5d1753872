// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_request.c - libFuzzer target: tbrdmad's state socket request handler: one request
 * line (any bytes, as a local user can send them) through request_handle(), the JSON parser
 * and dispatcher, as root and as an unprivileged user; the reply must exist and be one line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "request.h"

static int fake_rail_set(void *ud, const char *d, uint32_t l, uint32_t r, bool cut, char *msg,
			 size_t n)
{
	return (l + r) % 2 ? -22 : 0;
}

static int fake_sweep(void *ud, char *msg, size_t n)
{
	return 0;
}

static int fake_fabric(void *ud, json_object *reply)
{
	json_object_object_add(reply, "hosts", json_object_new_array());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const RequestOps ops = { .rail_set_cut = fake_rail_set, .sweep = fake_sweep,
					  .fabric = fake_fabric };
	static Model model;
	static Rail rail = { .device = "tbrdma0", .link = 1, .id = 0, .backend = "emu", .up = true };
	static Link link = { .device = "tbrdma0", .id = 1, .peer_guid = 0x2222, .up = true,
			     .rails_up = 1, .rails_total = 1 };
	DaemonInfo info = { .version = "fuzz", .family = "tbrdma", .kernel_present = size % 2 };
	RequestContext c = { .uid = size % 3 ? 0 : 1000, .model = &model, .info = &info, .ops = &ops };
	Device dev = { .name = "tbrdma0", .netdev = "tbr0" };
	json_object *o;
	size_t len;
	char *line;

	model.devices = &dev;
	model.n_devices = 1;
	model.links = &link;
	model.n_links = 1;
	model.rails = &rail;
	model.n_rails = 1;
	o = request_handle(&c, (const char *)data, size);
	if (!o)
		abort();
	line = reply_to_line(o, &len);
	if (!line || !len || line[len - 1] != '\n' || memchr(line, '\n', len - 1))
		abort();
	json_object_put(o);
	/* what goes back to the client is JSON again (json-c parses it back) */
	line[len - 1] = '\0';
	o = json_tokener_parse(line);
	if (!o)
		abort();
	free(line);
	json_object_put(o);
	return 0;
}
