// SPDX-License-Identifier: GPL-2.0
/*
 * dst-cn: configure DST through its connector, the original 2008 control
 * ABI (docs/connector.md).  One command per run; the module's
 * acknowledgment decides the exit status.
 *
 * Most administrators want dstctl or configfs; this tool exists for
 * compatibility with the original's way of working, and so the tests can
 * drive the connector door.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <linux/dst.h>

#define MSG_MAX	1024

static const char *prog = "dst-cn";

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s [-t SECONDS] COMMAND NAME [ARGS]\n"
"\n"
"Commands (each one DST connector message; see dst-cn(8), docs/connector.md):\n"
"  add-export NAME DEVICE ADDR:PORT [size=BYTES]\n"
"  add-remote NAME ADDR:PORT [export=EXPORT] [size=BYTES] [max_pages=N]\n"
"             [trans_scan_timeout=MS] [trans_max_retries=N]\n"
"  security   NAME ADDR[/PREFIX] ro|rw    add an access rule to an export\n"
"  crypto     NAME [hash=ALG] [cipher=ALG] [hash_key=HEX] [cipher_key=HEX]\n"
"             [threads=N]\n"
"  start      NAME                        enable the node\n"
"  del        NAME                        remove the node\n"
"\n"
"ADDR is IPv4 (10.0.0.1:7000) or bracketed IPv6 ([fd00::1]:7000).\n"
"-t: seconds to wait for the acknowledgment (default 60).\n"
"Exit status: 0 done, 1 refused or failed, 2 bad usage.\n", prog);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(%s --help for usage)\n", prog);
	exit(2);
}

static unsigned long long parse_num(const char *what, const char *s,
				    unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		bad_usage("%s: '%s' is not a number from 0 to %llu", what, s,
			  max);
	return v;
}

/* "a.b.c.d:port" or "[v6]:port" into the original's struct saddr. */
static void parse_hostport(const char *s, struct dst_saddr *sa)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST,
	};
	unsigned long long portnum;
	char host[INET6_ADDRSTRLEN + 32];
	const char *port = strrchr(s, ':');
	struct addrinfo *ai;
	size_t hlen;
	int err;

	if (!port || port == s || !port[1])
		bad_usage("address '%s': want ADDR:PORT or [ADDR6]:PORT", s);
	hlen = port - s;
	if (s[0] == '[') {
		if (hlen < 3 || s[hlen - 1] != ']')
			bad_usage("address '%s': unbalanced brackets", s);
		s++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		bad_usage("address '%s' too long", s);
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	portnum = parse_num("port", port + 1, 65535);
	if (!portnum)
		bad_usage("address '%s': port 0", s);
	err = getaddrinfo(host, NULL, &hints, &ai);
	if (err)
		bad_usage("address '%s': %s", s, gai_strerror(err));
	memset(sa, 0, sizeof(*sa));
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	sa->sa_data_len = ai->ai_addrlen;
	/* sin_port and sin6_port share their place */
	((struct sockaddr_in *)sa)->sin_port = htons(portnum);
	freeaddrinfo(ai);
}

/* "ADDR[/PREFIX]" into a struct saddr and DST_SECURITY flags. */
static unsigned int parse_prefix(const char *s, struct dst_saddr *sa)
{
	char buf[INET6_ADDRSTRLEN + 8];
	struct sockaddr_in *in = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
	unsigned int flags = 0;
	char *slash;

	if (strlen(s) >= sizeof(buf))
		bad_usage("rule address '%s' too long", s);
	strcpy(buf, s);
	memset(sa, 0, sizeof(*sa));
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (inet_pton(AF_INET, buf, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		sa->sa_data_len = sizeof(*in);
	} else if (inet_pton(AF_INET6, buf, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		sa->sa_data_len = sizeof(*in6);
	} else {
		bad_usage("rule address '%s': want IPv4 or IPv6, optional /PREFIX", s);
	}
	if (slash)
		flags = DST_SEC_PREFIX |
			parse_num("prefix", slash,
				  sa->sa_family == AF_INET ? 32 : 128);
	return flags;
}

/* "KEY=VALUE": the value if @arg's key is @key, else NULL. */
static const char *opt(const char *arg, const char *key)
{
	size_t len = strlen(key);

	return !strncmp(arg, key, len) && arg[len] == '=' ? arg + len + 1 : NULL;
}

static size_t parse_hex(const char *what, const char *s, unsigned char *out,
			size_t max)
{
	size_t n = strlen(s) / 2, i;

	if (strlen(s) % 2 || n > max)
		bad_usage("%s: want an even number of hex digits, at most %zu bytes",
			  what, max);
	for (i = 0; i < n; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1 ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i]) ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i + 1]))
			bad_usage("%s: '%s' is not hex", what, s);
		out[i] = b;
	}
	return n;
}

static void set_name(char *dst, size_t size, const char *what, const char *s)
{
	if (!*s || strlen(s) >= size)
		bad_usage("%s '%s': 1 to %zu characters", what, s, size - 1);
	strcpy(dst, s);
}

/* Build the message for argv; returns the payload length. */
static size_t build(int argc, char **argv, struct dst_ctl *ctl, void *payload)
{
	const char *cmd = argv[0];
	int i;

	if (argc < 2)
		bad_usage("%s: missing NAME", cmd);
	set_name(ctl->name, sizeof(ctl->name), "node name", argv[1]);

	if (!strcmp(cmd, "start") || !strcmp(cmd, "del")) {
		if (argc != 2)
			bad_usage("%s takes only NAME", cmd);
		ctl->cmd = cmd[0] == 's' ? DST_START : DST_DEL_NODE;
		return 0;
	}
	if (!strcmp(cmd, "add-export") || !strcmp(cmd, "add-remote")) {
		struct dst_network_ctl *net;
		int first;
		size_t len;

		if (cmd[4] == 'e') {
			struct dst_export_ctl *ex = payload;

			if (argc < 4)
				bad_usage("usage: add-export NAME DEVICE ADDR:PORT [size=BYTES]");
			ctl->cmd = DST_ADD_EXPORT;
			set_name(ex->device, sizeof(ex->device), "device",
				 argv[2]);
			net = &ex->ctl;
			parse_hostport(argv[3], &net->addr);
			first = 4;
			len = sizeof(*ex);
		} else {
			if (argc < 3)
				bad_usage("usage: add-remote NAME ADDR:PORT [KEY=VALUE...]");
			ctl->cmd = DST_ADD_REMOTE;
			net = payload;
			parse_hostport(argv[2], &net->addr);
			first = 3;
			len = sizeof(*net);
			for (i = first; i < argc; i++) {
				struct dst_remote_ctl *rc = payload;
				const char *v = opt(argv[i], "export");

				if (!v)
					continue;
				/* The extension: the export to attach. */
				set_name(rc->export, sizeof(rc->export),
					 "export", v);
				len = sizeof(*rc);
				argv[i] = NULL;
			}
		}
		net->type = SOCK_STREAM;
		net->proto = IPPROTO_TCP;
		for (i = first; i < argc; i++) {
			const char *v;

			if (!argv[i])
				continue;
			if ((v = opt(argv[i], "size")))
				ctl->size = parse_num("size", v, INT64_MAX);
			else if ((v = opt(argv[i], "max_pages")))
				ctl->max_pages = parse_num("max_pages", v, UINT32_MAX);
			else if ((v = opt(argv[i], "trans_scan_timeout")))
				ctl->trans_scan_timeout =
					parse_num("trans_scan_timeout", v, UINT32_MAX);
			else if ((v = opt(argv[i], "trans_max_retries")))
				ctl->trans_max_retries =
					parse_num("trans_max_retries", v, UINT32_MAX);
			else
				bad_usage("%s: unknown argument '%s'", cmd, argv[i]);
		}
		return len;
	}
	if (!strcmp(cmd, "security")) {
		struct dst_secure_user *sec = payload;

		if (argc != 4)
			bad_usage("usage: security NAME ADDR[/PREFIX] ro|rw");
		ctl->cmd = DST_SECURITY;
		ctl->flags = parse_prefix(argv[2], &sec->addr);
		if (!strcmp(argv[3], "ro"))
			sec->permissions = DST_PERM_READ;
		else if (!strcmp(argv[3], "rw"))
			sec->permissions = DST_PERM_READ | DST_PERM_WRITE;
		else
			bad_usage("permission '%s': want ro or rw", argv[3]);
		return sizeof(*sec);
	}
	if (!strcmp(cmd, "crypto")) {
		struct dst_crypto_ctl *c = payload;
		unsigned char hkey[DST_KEY_MAX], ckey[DST_KEY_MAX];
		unsigned char *keys = (unsigned char *)(c + 1);

		ctl->cmd = DST_CRYPTO;
		for (i = 2; i < argc; i++) {
			const char *v;

			if ((v = opt(argv[i], "hash")))
				set_name(c->hash_algo, sizeof(c->hash_algo), "hash", v);
			else if ((v = opt(argv[i], "cipher")))
				set_name(c->cipher_algo, sizeof(c->cipher_algo),
					 "cipher", v);
			else if ((v = opt(argv[i], "hash_key")))
				c->hash_keysize = parse_hex("hash_key", v, hkey,
							    sizeof(hkey));
			else if ((v = opt(argv[i], "cipher_key")))
				c->cipher_keysize = parse_hex("cipher_key", v, ckey,
							      sizeof(ckey));
			else if ((v = opt(argv[i], "threads")))
				c->thread_num = parse_num("threads", v,
							  INT32_MAX);
			else
				bad_usage("crypto: unknown argument '%s'", argv[i]);
		}
		memcpy(keys, hkey, c->hash_keysize);
		memcpy(keys + c->hash_keysize, ckey, c->cipher_keysize);
		memset(hkey, 0, sizeof(hkey));
		memset(ckey, 0, sizeof(ckey));
		return sizeof(*c) + c->hash_keysize + c->cipher_keysize;
	}
	bad_usage("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
	static char buf[NLMSG_SPACE(MSG_MAX)], rbuf[NLMSG_SPACE(MSG_MAX)];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct cn_msg *msg = NLMSG_DATA(nlh);
	struct dst_ctl *ctl = (struct dst_ctl *)msg->data;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 60 };
	struct dst_ctl_ack_payload *ack;
	uint32_t seq;
	size_t plen;
	int s, opt_i = 1;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "-t")) {
		tv.tv_sec = parse_num("-t", argv[2], 3600);
		if (!tv.tv_sec)
			bad_usage("-t: at least 1 second");
		opt_i = 3;
	}
	if (argc <= opt_i) {
		usage(stderr);
		return 2;
	}

	memset(buf, 0, sizeof(buf));
	plen = build(argc - opt_i, argv + opt_i, ctl, ctl + 1);
	msg->id.idx = CN_DST_IDX;
	msg->id.val = CN_DST_VAL;
	seq = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
	msg->seq = seq;
	msg->len = sizeof(*ctl) + plen;
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*msg) + msg->len);
	nlh->nlmsg_type = NLMSG_DONE;

	s = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_CONNECTOR);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "%s: netlink connector socket: %s\n", prog,
			strerror(errno));
		return 1;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(s, nlh, nlh->nlmsg_len, 0) < 0) {
		fprintf(stderr, "%s: send: %s\n", prog, strerror(errno));
		return 1;
	}
	/* Keys have been handed over: do not keep a copy. */
	memset(buf, 0, sizeof(buf));

	for (;;) {
		struct nlmsghdr *rh = (struct nlmsghdr *)rbuf;
		struct cn_msg *rm = NLMSG_DATA(rh);
		ssize_t n = recv(s, rbuf, sizeof(rbuf), 0);

		if (n < 0) {
			fprintf(stderr, "%s: no acknowledgment from dst (is the module loaded?): %s\n",
				prog, strerror(errno));
			return 1;
		}
		if (n < (ssize_t)NLMSG_LENGTH(sizeof(*rm) + sizeof(*ack)) ||
		    rm->id.idx != CN_DST_IDX || rm->id.val != CN_DST_VAL ||
		    rm->ack != seq + 1 || rm->len < sizeof(*ack))
			continue;	/* not our answer */
		ack = (struct dst_ctl_ack_payload *)rm->data;
		if (ack->error) {
			fprintf(stderr, "%s: %s %s: %s\n", prog, argv[opt_i],
				argv[opt_i + 1], strerror(-ack->error));
			return 1;
		}
		return 0;
	}
}
