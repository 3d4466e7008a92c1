// SPDX-License-Identifier: GPL-2.0
/*
 * DST security: an export's access list (exports/<name>/acl/<rule>/).
 *
 * A rule is an address prefix (IPv4 or IPv6 CIDR) and a permission, ro or
 * rw.  A client is admitted by the most specific rule that matches its
 * address (the longest prefix; between equal prefixes the more
 * restrictive permission), so "10.0.0.0/8 rw" with "10.0.5.0/24 ro"
 * means what it says.  No matching rule, and so an empty list, refuses
 * the client: opening an export to everyone takes explicit 0.0.0.0/0 and
 * ::/0 rules.  IPv6 listeners are IPv6-only (conn.c), but an IPv4 client
 * seen as ::ffff:a.b.c.d would be matched against the IPv4 rules, never
 * slip through an IPv6 one.
 *
 * The list is read at every handshake, so a change applies to the next
 * connection; connections already in are not re-checked (as nvmet's
 * allowed_hosts): disable and enable the export to apply it to all.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/inetdevice.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "dst.h"

void dst_acl_init(struct dst_node *node)
{
	INIT_LIST_HEAD(&node->acl);
	mutex_init(&node->acl_lock);
}

/* A new rule matches nothing until its addr is written; perm is ro. */
struct dst_acl_rule *dst_acl_rule_create(struct dst_node *node,
					 const char *name)
{
	struct dst_acl_rule *rule;

	if (strlen(name) >= DST_NAMELEN) {
		pr_err("%s: acl rule name '%s' longer than %d\n", node->name,
		       name, DST_NAMELEN - 1);
		return ERR_PTR(-ENAMETOOLONG);
	}
	rule = kzalloc(sizeof(*rule), GFP_KERNEL);
	if (!rule)
		return ERR_PTR(-ENOMEM);
	strscpy(rule->name, name, sizeof(rule->name));
	rule->node = node;
	rule->perm = DST_PERM_RO;
	mutex_lock(&node->acl_lock);
	list_add_tail(&rule->entry, &node->acl);
	mutex_unlock(&node->acl_lock);
	return rule;
}

void dst_acl_rule_remove(struct dst_acl_rule *rule)
{
	struct dst_node *node = rule->node;

	mutex_lock(&node->acl_lock);
	list_del_init(&rule->entry);
	mutex_unlock(&node->acl_lock);
}

void dst_acl_rule_free(struct dst_acl_rule *rule)
{
	kfree(rule);
}

/* "A" or "A/N", A an IPv4 or IPv6 address without port or brackets. */
static int dst_acl_parse(const char *str, struct dst_acl_rule *r)
{
	const char *slash = strchr(str, '/');
	size_t alen = slash ? slash - str : strlen(str);
	unsigned int max;
	const char *end;
	u8 plen;

	memset(&r->addr, 0, sizeof(r->addr));
	if (!alen)
		return -EINVAL;
	if (in4_pton(str, alen, (u8 *)&r->addr.v4, -1, &end) &&
	    end == str + alen) {
		r->family = AF_INET;
		max = 32;
	} else if (in6_pton(str, alen, r->addr.v6.s6_addr, -1, &end) &&
		   end == str + alen) {
		r->family = AF_INET6;
		max = 128;
	} else {
		return -EINVAL;
	}
	if (!slash)
		plen = max;
	else if (kstrtou8(slash + 1, 10, &plen) || plen > max)
		return -EINVAL;
	r->plen = plen;
	/* Keep the prefix only: what is shown is what is matched. */
	if (r->family == AF_INET) {
		r->addr.v4 &= inet_make_mask(plen);
	} else {
		struct in6_addr full = r->addr.v6;

		/* Not in place: it clears its destination first. */
		ipv6_addr_prefix(&r->addr.v6, &full, plen);
	}
	return 0;
}

int dst_acl_rule_set_addr(struct dst_acl_rule *rule, const char *str)
{
	struct dst_node *node = rule->node;
	struct dst_acl_rule parsed;
	int err;

	err = dst_acl_parse(str, &parsed);
	if (err) {
		pr_err("%s: acl %s: invalid address '%s': want A.B.C.D[/N] or IPv6[/N]\n",
		       node->name, rule->name, str);
		return err;
	}
	mutex_lock(&node->acl_lock);
	rule->family = parsed.family;
	rule->addr = parsed.addr;
	rule->plen = parsed.plen;
	mutex_unlock(&node->acl_lock);
	return 0;
}

ssize_t dst_acl_rule_show_addr(struct dst_acl_rule *rule, char *buf)
{
	struct dst_node *node = rule->node;
	ssize_t len;

	mutex_lock(&node->acl_lock);
	if (rule->family == AF_INET)
		len = sysfs_emit(buf, "%pI4/%u\n", &rule->addr.v4, rule->plen);
	else if (rule->family == AF_INET6)
		len = sysfs_emit(buf, "%pI6c/%u\n", &rule->addr.v6,
				 rule->plen);
	else
		len = sysfs_emit(buf, "\n");
	mutex_unlock(&node->acl_lock);
	return len;
}

int dst_acl_rule_set_perm(struct dst_acl_rule *rule, const char *str)
{
	struct dst_node *node = rule->node;
	int perm;

	if (sysfs_streq(str, "ro")) {
		perm = DST_PERM_RO;
	} else if (sysfs_streq(str, "rw")) {
		perm = DST_PERM_RW;
	} else {
		pr_err("%s: acl %s: invalid perm: want ro or rw\n",
		       node->name, rule->name);
		return -EINVAL;
	}
	mutex_lock(&node->acl_lock);
	WRITE_ONCE(rule->perm, perm);
	mutex_unlock(&node->acl_lock);
	return 0;
}

ssize_t dst_acl_rule_show_perm(struct dst_acl_rule *rule, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  READ_ONCE(rule->perm) == DST_PERM_RW ? "rw" : "ro");
}

static bool dst_acl_match(const struct dst_acl_rule *r, int family,
			  const void *addr)
{
	if (r->family != family)
		return false;
	if (family == AF_INET)
		return !((*(const __be32 *)addr ^ r->addr.v4) &
			 inet_make_mask(r->plen));
	return ipv6_prefix_equal(addr, &r->addr.v6, r->plen);
}

/**
 * dst_acl_check - may a client from @peer use this export, and how
 * @node: the export
 * @peer: the client's address
 * @ro: set when the rule that admits it is read-only
 *
 * Returns 0 if a rule admits the client, -EACCES if none does.
 */
int dst_acl_check(struct dst_node *node, const struct sockaddr_storage *peer,
		  bool *ro)
{
	const struct dst_acl_rule *r, *best = NULL;
	int family = peer->ss_family;
	const void *addr;

	if (family == AF_INET) {
		addr = &((const struct sockaddr_in *)peer)->sin_addr.s_addr;
	} else if (family == AF_INET6) {
		const struct in6_addr *a6 =
			&((const struct sockaddr_in6 *)peer)->sin6_addr;

		if (ipv6_addr_v4mapped(a6)) {
			family = AF_INET;
			addr = &a6->s6_addr32[3];
		} else {
			addr = a6;
		}
	} else {
		return -EACCES;
	}

	mutex_lock(&node->acl_lock);
	list_for_each_entry(r, &node->acl, entry) {
		if (!dst_acl_match(r, family, addr))
			continue;
		if (!best || r->plen > best->plen ||
		    (r->plen == best->plen && r->perm < best->perm))
			best = r;
	}
	if (best)
		*ro = best->perm != DST_PERM_RW;
	mutex_unlock(&node->acl_lock);
	return best ? 0 : -EACCES;
}

/* True if no rule has an address: every client would be refused. */
bool dst_acl_empty(struct dst_node *node)
{
	const struct dst_acl_rule *r;
	bool empty = true;

	mutex_lock(&node->acl_lock);
	list_for_each_entry(r, &node->acl, entry)
		if (r->family)
			empty = false;
	mutex_unlock(&node->acl_lock);
	return empty;
}

/**
 * dst_acl_rule_set_by_name - give a rule its prefix and permission
 * @node: the export
 * @name: the rule (a directory the connector just made)
 * @ss: the address; only the family and the address are used
 * @plen: prefix length, at most 32 (IPv4) or 128 (IPv6)
 * @perm: DST_PERM_RO or DST_PERM_RW
 *
 * The connector's DST_SECURITY.  Returns -EINVAL for a prefix or
 * permission out of range, -ENOENT if the rule is gone.
 */
int dst_acl_rule_set_by_name(struct dst_node *node, const char *name,
			     const struct sockaddr_storage *ss, u8 plen,
			     int perm)
{
	struct dst_acl_rule parsed = { .family = ss->ss_family, .plen = plen };
	struct dst_acl_rule *r;
	int err = -ENOENT;

	if (perm != DST_PERM_RO && perm != DST_PERM_RW)
		return -EINVAL;
	if (ss->ss_family == AF_INET) {
		if (plen > 32)
			return -EINVAL;
		parsed.addr.v4 = ((const struct sockaddr_in *)ss)->sin_addr.s_addr &
				 inet_make_mask(plen);
	} else if (ss->ss_family == AF_INET6) {
		if (plen > 128)
			return -EINVAL;
		ipv6_addr_prefix(&parsed.addr.v6,
				 &((const struct sockaddr_in6 *)ss)->sin6_addr,
				 plen);
	} else {
		return -EAFNOSUPPORT;
	}

	mutex_lock(&node->acl_lock);
	list_for_each_entry(r, &node->acl, entry) {
		if (strcmp(r->name, name))
			continue;
		r->family = parsed.family;
		r->addr = parsed.addr;
		r->plen = parsed.plen;
		WRITE_ONCE(r->perm, perm);
		err = 0;
		break;
	}
	mutex_unlock(&node->acl_lock);
	return err;
}

/*
 * The names of an export's rules, each in DST_NAMELEN bytes of a
 * kmalloc'ed buffer the caller frees; returns how many, or -ENOMEM.
 */
int dst_acl_rule_names(struct dst_node *node, char **names)
{
	const struct dst_acl_rule *r;
	unsigned int n = 0;

	*names = NULL;
	mutex_lock(&node->acl_lock);
	list_for_each_entry(r, &node->acl, entry)
		n++;
	if (n) {
		*names = kmalloc_array(n, DST_NAMELEN, GFP_KERNEL);
		if (!*names) {
			mutex_unlock(&node->acl_lock);
			return -ENOMEM;
		}
		n = 0;
		list_for_each_entry(r, &node->acl, entry)
			strscpy(*names + DST_NAMELEN * n++, r->name,
				DST_NAMELEN);
	}
	mutex_unlock(&node->acl_lock);
	return n;
}
