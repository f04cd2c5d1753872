// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: XDomain property directories (the exported tb_property_* API) and
 * their block encoding. The API contract is the real one: keys of 1..8
 * characters, immediate/data/text/directory entries, data and text lengths
 * in dwords, tb_property_format_dir() returning the needed length for a NULL
 * block. The block layout is the stand-in's own (both ends of a cable are the
 * stand-in): magic, length, then a directory = entry count and entries, an
 * entry = key (2 dwords), type << 24 | length, value; a subdirectory's value
 * is its UUID (4 dwords) and its directory.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/utsname.h>

#include "tbsim.h"

#define TBSIM_PROP_MAGIC	0x54425331	/* "TBS1" */
#define TBSIM_PROP_DEPTH	4
#define TBSIM_PROP_MAX_LEN	500		/* TB_XDP_PROPERTIES_MAX_LENGTH */

static bool key_valid(const char *key)
{
	return key && *key && strlen(key) <= TB_PROPERTY_KEY_SIZE;
}

static struct tb_property *prop_alloc(const char *key, enum tb_property_type type)
{
	struct tb_property *p;

	if (!key_valid(key))
		return NULL;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	strscpy(p->key, key, sizeof(p->key));
	p->type = type;
	INIT_LIST_HEAD(&p->list);
	return p;
}

static void prop_free(struct tb_property *p)
{
	switch (p->type) {
	case TB_PROPERTY_TYPE_DIRECTORY:
		if (p->value.dir)
			tb_property_free_dir(p->value.dir);
		break;
	case TB_PROPERTY_TYPE_DATA:
		kfree(p->value.data);
		break;
	case TB_PROPERTY_TYPE_TEXT:
		kfree(p->value.text);
		break;
	default:
		break;
	}
	kfree(p);
}

struct tb_property_dir *tb_property_create_dir(const uuid_t *uuid)
{
	struct tb_property_dir *dir = kzalloc(sizeof(*dir), GFP_KERNEL);

	if (!dir)
		return NULL;
	INIT_LIST_HEAD(&dir->properties);
	if (uuid) {
		dir->uuid = kmemdup(uuid, sizeof(*uuid), GFP_KERNEL);
		if (!dir->uuid) {
			kfree(dir);
			return NULL;
		}
	}
	return dir;
}
EXPORT_SYMBOL_GPL(tb_property_create_dir);

void tb_property_free_dir(struct tb_property_dir *dir)
{
	struct tb_property *p, *tmp;

	if (!dir)
		return;
	list_for_each_entry_safe(p, tmp, &dir->properties, list) {
		list_del(&p->list);
		prop_free(p);
	}
	kfree(dir->uuid);
	kfree(dir);
}
EXPORT_SYMBOL_GPL(tb_property_free_dir);

int tb_property_add_immediate(struct tb_property_dir *parent, const char *key, u32 value)
{
	struct tb_property *p = prop_alloc(key, TB_PROPERTY_TYPE_VALUE);

	if (!p)
		return -EINVAL;
	p->length = 1;
	p->value.immediate = value;
	list_add_tail(&p->list, &parent->properties);
	return 0;
}
EXPORT_SYMBOL_GPL(tb_property_add_immediate);

int tb_property_add_data(struct tb_property_dir *parent, const char *key,
			 const void *buf, size_t buflen)
{
	size_t size = round_up(buflen, 4);
	struct tb_property *p = prop_alloc(key, TB_PROPERTY_TYPE_DATA);

	if (!p)
		return -EINVAL;
	p->length = size / 4;
	p->value.data = kzalloc(size, GFP_KERNEL);
	if (!p->value.data) {
		kfree(p);
		return -ENOMEM;
	}
	memcpy(p->value.data, buf, buflen);
	list_add_tail(&p->list, &parent->properties);
	return 0;
}
EXPORT_SYMBOL_GPL(tb_property_add_data);

int tb_property_add_text(struct tb_property_dir *parent, const char *key, const char *text)
{
	size_t size = round_up(strlen(text) + 1, 4);
	struct tb_property *p = prop_alloc(key, TB_PROPERTY_TYPE_TEXT);

	if (!p)
		return -EINVAL;
	p->length = size / 4;
	p->value.text = kzalloc(size, GFP_KERNEL);
	if (!p->value.text) {
		kfree(p);
		return -ENOMEM;
	}
	strcpy(p->value.text, text);
	list_add_tail(&p->list, &parent->properties);
	return 0;
}
EXPORT_SYMBOL_GPL(tb_property_add_text);

int tb_property_add_dir(struct tb_property_dir *parent, const char *key,
			struct tb_property_dir *dir)
{
	struct tb_property *p;

	if (!dir || !dir->uuid)
		return -EINVAL;
	p = prop_alloc(key, TB_PROPERTY_TYPE_DIRECTORY);
	if (!p)
		return -EINVAL;
	p->value.dir = dir;
	list_add_tail(&p->list, &parent->properties);
	return 0;
}
EXPORT_SYMBOL_GPL(tb_property_add_dir);

void tb_property_remove(struct tb_property *property)
{
	list_del(&property->list);
	kfree(property);
}
EXPORT_SYMBOL_GPL(tb_property_remove);

struct tb_property *tb_property_find(struct tb_property_dir *dir, const char *key,
				     enum tb_property_type type)
{
	struct tb_property *p;

	list_for_each_entry(p, &dir->properties, list)
		if (p->type == type && !strcmp(p->key, key))
			return p;
	return NULL;
}
EXPORT_SYMBOL_GPL(tb_property_find);

struct tb_property *tb_property_get_next(struct tb_property_dir *dir,
					 struct tb_property *prev)
{
	if (prev) {
		if (list_is_last(&prev->list, &dir->properties))
			return NULL;
		return list_next_entry(prev, list);
	}
	return list_first_entry_or_null(&dir->properties, struct tb_property, list);
}
EXPORT_SYMBOL_GPL(tb_property_get_next);

struct tb_property_dir *tb_property_copy_dir(const struct tb_property_dir *dir)
{
	struct tb_property_dir *d = tb_property_create_dir(dir->uuid);
	struct tb_property *p;
	int ret = 0;

	if (!d)
		return NULL;
	list_for_each_entry(p, &dir->properties, list) {
		switch (p->type) {
		case TB_PROPERTY_TYPE_VALUE:
			ret = tb_property_add_immediate(d, p->key, p->value.immediate);
			break;
		case TB_PROPERTY_TYPE_DATA:
			ret = tb_property_add_data(d, p->key, p->value.data, p->length * 4);
			break;
		case TB_PROPERTY_TYPE_TEXT:
			ret = tb_property_add_text(d, p->key, p->value.text);
			break;
		case TB_PROPERTY_TYPE_DIRECTORY: {
			struct tb_property_dir *sub = tb_property_copy_dir(p->value.dir);

			ret = sub ? tb_property_add_dir(d, p->key, sub) : -ENOMEM;
			if (ret)
				tb_property_free_dir(sub);
			break;
		}
		default:
			break;
		}
		if (ret) {
			tb_property_free_dir(d);
			return NULL;
		}
	}
	return d;
}

/* ---- block encoding ------------------------------------------------------ */

/* Writes @dir at @b (NULL: only count); returns its length in dwords. */
static size_t fmt_dir(const struct tb_property_dir *dir, u32 *b, size_t max)
{
	struct tb_property *p;
	size_t n = 1, len;
	u32 count = 0;

	list_for_each_entry(p, &dir->properties, list) {
		if (p->type == TB_PROPERTY_TYPE_DIRECTORY)
			len = 4 + fmt_dir(p->value.dir, NULL, 0);
		else
			len = p->length;
		if (b && n + 3 + len <= max) {
			memcpy(&b[n], p->key, 8);
			b[n + 2] = (u32)p->type << 24 | (u32)len;
			if (p->type == TB_PROPERTY_TYPE_VALUE)
				b[n + 3] = p->value.immediate;
			else if (p->type == TB_PROPERTY_TYPE_DATA)
				memcpy(&b[n + 3], p->value.data, len * 4);
			else if (p->type == TB_PROPERTY_TYPE_TEXT)
				memcpy(&b[n + 3], p->value.text, len * 4);
			else if (p->type == TB_PROPERTY_TYPE_DIRECTORY) {
				memcpy(&b[n + 3], p->value.dir->uuid, 16);
				fmt_dir(p->value.dir, &b[n + 7], max - n - 7);
			}
		}
		n += 3 + len;
		count++;
	}
	if (b && max)
		b[0] = count;
	return n;
}

ssize_t tb_property_format_dir(const struct tb_property_dir *dir, u32 *block,
			       size_t block_len)
{
	size_t len = 2 + fmt_dir(dir, NULL, 0);

	if (!block)
		return len;
	if (len > block_len)
		return -EINVAL;
	block[0] = TBSIM_PROP_MAGIC;
	block[1] = len;
	fmt_dir(dir, &block[2], block_len - 2);
	return 0;
}

/* Parses the directory at @b[0, len); NULL if anything is out of bounds. */
static struct tb_property_dir *parse_dir(const u32 *b, size_t len, const uuid_t *uuid,
					 int depth)
{
	struct tb_property_dir *dir;
	size_t n = 1, plen;
	u32 count, i;
	char key[TB_PROPERTY_KEY_SIZE + 1];
	int ret = 0;

	if (!len || depth > TBSIM_PROP_DEPTH)
		return NULL;
	dir = tb_property_create_dir(uuid);
	if (!dir)
		return NULL;
	count = b[0];
	for (i = 0; i < count && !ret; i++) {
		u32 type;

		if (n + 3 > len)
			goto err;
		memcpy(key, &b[n], 8);
		key[8] = 0;
		type = b[n + 2] >> 24;
		plen = b[n + 2] & GENMASK(23, 0);
		if (plen > len - n - 3)
			goto err;
		switch (type) {
		case TB_PROPERTY_TYPE_VALUE:
			ret = plen == 1 ? tb_property_add_immediate(dir, key, b[n + 3]) : -EINVAL;
			break;
		case TB_PROPERTY_TYPE_DATA:
			ret = tb_property_add_data(dir, key, &b[n + 3], plen * 4);
			break;
		case TB_PROPERTY_TYPE_TEXT:
			if (!plen || memchr(&b[n + 3], 0, plen * 4) == NULL)
				goto err;
			ret = tb_property_add_text(dir, key, (const char *)&b[n + 3]);
			break;
		case TB_PROPERTY_TYPE_DIRECTORY: {
			struct tb_property_dir *sub;
			uuid_t u;

			if (plen < 5)
				goto err;
			memcpy(&u, &b[n + 3], 16);
			sub = parse_dir(&b[n + 7], plen - 4, &u, depth + 1);
			if (!sub)
				goto err;
			ret = tb_property_add_dir(dir, key, sub);
			if (ret)
				tb_property_free_dir(sub);
			break;
		}
		default:
			goto err;
		}
		n += 3 + plen;
	}
	if (!ret)
		return dir;
err:
	tb_property_free_dir(dir);
	return NULL;
}

struct tb_property_dir *tb_property_parse_dir(const u32 *block, size_t block_len)
{
	if (block_len < 3 || block_len > TBSIM_PROP_MAX_LEN ||
	    block[0] != TBSIM_PROP_MAGIC || block[1] != block_len)
		return NULL;
	return parse_dir(&block[2], block_len - 2, NULL, 0);
}

/* ---- the local property block (what peers read) -------------------------- */

struct tbsim_dir {
	struct list_head node;
	const char *key;
	struct tb_property_dir *dir;
};

/*
 * The root directory peers read: the host's identity (as the real
 * xdomain.c publishes: vendor and device ids and names, maxhopid) and every
 * registered service directory. tbsim.lock held. 0 or -errno.
 */
int tbsim_local_block_update(void)
{
	struct tb_property_dir *root;
	struct tbsim_dir *d;
	u32 *block;
	int len, ret;

	root = tb_property_create_dir(NULL);
	if (!root)
		return -ENOMEM;
	ret = tb_property_add_immediate(root, "vendorid", 0x1234);
	ret = ret ?: tb_property_add_text(root, "vendorid", "tbsim");
	ret = ret ?: tb_property_add_immediate(root, "deviceid", 0x11e8);
	ret = ret ?: tb_property_add_text(root, "deviceid", utsname()->nodename);
	ret = ret ?: tb_property_add_immediate(root, "maxhopid", TBSIM_MAX_HOPID);
	list_for_each_entry(d, &tbsim.dirs, node) {
		struct tb_property_dir *copy;

		if (ret)
			break;
		copy = tb_property_copy_dir(d->dir);
		ret = copy ? tb_property_add_dir(root, d->key, copy) : -ENOMEM;
		if (ret && copy)
			tb_property_free_dir(copy);
	}
	if (ret)
		goto out;
	len = tb_property_format_dir(root, NULL, 0);
	if (len > TBSIM_PROP_MAX_LEN) {
		ret = -E2BIG;
		goto out;
	}
	block = kcalloc(len, 4, GFP_KERNEL);
	if (!block) {
		ret = -ENOMEM;
		goto out;
	}
	tb_property_format_dir(root, block, len);
	kfree(tbsim.block);
	tbsim.block = block;
	tbsim.block_len = len;
	tbsim.gen++;
out:
	tb_property_free_dir(root);
	return ret;
}

static struct tbsim_dir *dir_find(const char *key)
{
	struct tbsim_dir *d;

	list_for_each_entry(d, &tbsim.dirs, node)
		if (!strcmp(d->key, key))
			return d;
	return NULL;
}

/*
 * Publish @dir under @key: every XDomain's peer is told the properties
 * changed and re-reads them, so the service appears there. -EEXIST if the
 * key is taken. Process context.
 */
int tb_register_property_dir(const char *key, struct tb_property_dir *dir)
{
	struct tbsim_dir *d;
	int ret;

	if (!key_valid(key) || !dir || !dir->uuid)
		return -EINVAL;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->key = key;
	d->dir = dir;
	mutex_lock(&tbsim.lock);
	if (dir_find(key)) {
		ret = -EEXIST;
		goto err;
	}
	list_add_tail(&d->node, &tbsim.dirs);
	ret = tbsim_local_block_update();
	if (ret) {
		list_del(&d->node);
		goto err;
	}
	mutex_unlock(&tbsim.lock);
	tbsim_xd_properties_changed();
	return 0;
err:
	mutex_unlock(&tbsim.lock);
	kfree(d);
	return ret;
}

void tb_unregister_property_dir(const char *key, struct tb_property_dir *dir)
{
	struct tbsim_dir *d;

	mutex_lock(&tbsim.lock);
	d = dir_find(key);
	if (!d || d->dir != dir) {
		mutex_unlock(&tbsim.lock);
		return;
	}
	list_del(&d->node);
	kfree(d);
	tbsim_local_block_update();
	mutex_unlock(&tbsim.lock);
	tbsim_xd_properties_changed();
}
