// SPDX-License-Identifier: GPL-2.0
/*
 * dst-rawwrite: a raw DST protocol client that does what the kernel's
 * remote never does on purpose: it writes whatever the server granted.
 * tests/bats/security.bats uses it to show that the server, not the
 * client, enforces a read-only access rule.
 *
 * It speaks docs/protocol.md from include/uapi/linux/dst.h alone (so
 * the header is tested as a userspace ABI too): HELLO, then one WRITE of
 * LENGTH bytes of 'X' at OFFSET, then one READ of 4096 bytes at OFFSET,
 * and prints one line per answer:
 *
 *   welcome features=0x.. size=N
 *   write status=N
 *   read status=N same_as_written=0|1
 *
 * Exit 0 when every answer arrived (whatever its status), 1 on a
 * protocol or network error, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/dst.h>

static void usage(void)
{
	fprintf(stderr,
		"usage: dst-rawwrite HOST PORT EXPORT OFFSET LENGTH\n"
		"  HELLO for EXPORT, then WRITE LENGTH bytes of 'X' at OFFSET\n"
		"  whatever the server granted, then READ 4096 bytes there.\n");
	exit(2);
}

static void die(const char *what)
{
	fprintf(stderr, "dst-rawwrite: %s: %s\n", what,
		errno ? strerror(errno) : "unexpected answer");
	exit(1);
}

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("send");
		p += n;
		len -= n;
	}
}

static void recv_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = ECONNRESET;
		if (n <= 0)
			die("recv");
		p += n;
		len -= n;
	}
}

static void send_hdr(int fd, uint8_t cmd, uint32_t len, uint64_t id,
		     uint64_t offset)
{
	struct dst_wire_hdr h = {
		.magic = htobe32(DST_PROTO_MAGIC),
		.version = DST_PROTO_VERSION,
		.cmd = cmd,
		.len = htobe32(len),
		.id = htobe64(id),
		.offset = htobe64(offset),
	};

	send_all(fd, &h, sizeof(h));
}

/* recv_reply: the next reply header, which must answer CMD. */
static uint32_t recv_reply(int fd, uint8_t cmd, uint32_t *len)
{
	struct dst_wire_hdr h;

	recv_all(fd, &h, sizeof(h));
	errno = 0;
	if (be32toh(h.magic) != DST_PROTO_MAGIC ||
	    h.cmd != (cmd | DST_CMD_REPLY))
		die("reply header");
	*len = be32toh(h.len);
	return be32toh(h.status);
}

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	int fd = -1, err;

	err = getaddrinfo(host, port, &hints, &ai);
	if (err) {
		fprintf(stderr, "dst-rawwrite: %s:%s: %s\n", host, port,
			gai_strerror(err));
		exit(1);
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd < 0)
			continue;
		if (!connect(fd, a->ai_addr, a->ai_addrlen))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		die("connect");
	return fd;
}

int main(int argc, char **argv)
{
	struct dst_wire_hello hello = { 0 };
	struct dst_wire_welcome w;
	unsigned long long offset, length;
	uint32_t st, len;
	char *end, *buf;
	size_t i;
	int fd, same;

	if (argc != 6)
		usage();
	if (strlen(argv[3]) >= DST_NAMELEN) {
		fprintf(stderr, "dst-rawwrite: export name longer than %d\n",
			DST_NAMELEN - 1);
		return 2;
	}
	offset = strtoull(argv[4], &end, 0);
	if (*end || offset % 512)
		usage();
	length = strtoull(argv[5], &end, 0);
	if (*end || !length || length % 512 || length > (1 << 20))
		usage();

	fd = connect_to(argv[1], argv[2]);

	/* Ask for everything; the welcome says what was granted. */
	hello.version_min = htobe16(DST_PROTO_VERSION_MIN);
	hello.version_max = htobe16(DST_PROTO_VERSION);
	hello.features = htobe32(DST_FEAT_ALL & ~DST_FEAT_READ_ONLY);
	hello.max_io = htobe32(1 << 20);
	strcpy(hello.export, argv[3]);
	hello.nr_queues = htobe16(1);
	hello.queue_depth = htobe16(2);
	send_hdr(fd, DST_CMD_HELLO, sizeof(hello), 0, 0);
	send_all(fd, &hello, sizeof(hello));
	st = recv_reply(fd, DST_CMD_HELLO, &len);
	if (st) {
		printf("hello status=%u\n", st);
		return 1;
	}
	if (len != sizeof(w))
		die("welcome length");
	recv_all(fd, &w, sizeof(w));
	printf("welcome features=0x%x size=%llu\n", be32toh(w.features),
	       (unsigned long long)be64toh(w.size));

	/* The WRITE, read-only or not.  Ids: generation 1, queue 0, tag 0
	 * for the WRITE, 1 for the READ (a reused id is a resend).
	 */
	buf = malloc(length > 4096 ? length : 4096);
	if (!buf)
		die("malloc");
	memset(buf, 'X', length);
	send_hdr(fd, DST_CMD_WRITE, length, 1ULL << 32, offset);
	send_all(fd, buf, length);
	st = recv_reply(fd, DST_CMD_WRITE, &len);
	printf("write status=%u\n", st);

	/* The connection goes on: a READ of what is there now. */
	send_hdr(fd, DST_CMD_READ, 4096, (1ULL << 32) | 1, offset);
	st = recv_reply(fd, DST_CMD_READ, &len);
	same = 0;
	if (!st) {
		if (len != 4096)
			die("read length");
		recv_all(fd, buf, 4096);
		for (i = 0, same = 1; i < 4096; i++)
			if (buf[i] != 'X')
				same = 0;
	}
	printf("read status=%u same_as_written=%d\n", st, same);
	free(buf);
	close(fd);
	return 0;
}
