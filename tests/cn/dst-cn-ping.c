// SPDX-License-Identifier: GPL-2.0
/*
 * dst-cn-ping: send one DST connector message (DST_START for a node named
 * by argv[1], default "none") and print the errno the module acknowledges
 * with.  Exits 0 when an ack arrived, 1 when none did within 5 s.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <linux/dst.h>

int main(int argc, char **argv)
{
	char buf[4096];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct cn_msg *msg = NLMSG_DATA(nlh);
	struct dst_ctl *ctl = (struct dst_ctl *)msg->data;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 5 };
	struct dst_ctl_ack_payload *ack;
	ssize_t n;
	int s;

	s = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_CONNECTOR);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("dst-cn-ping: netlink connector socket");
		return 1;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	memset(buf, 0, sizeof(buf));
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*msg) + sizeof(*ctl));
	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_pid = getpid();
	msg->id.idx = CN_DST_IDX;
	msg->id.val = CN_DST_VAL;
	msg->seq = 1;
	msg->len = sizeof(*ctl);
	snprintf(ctl->name, sizeof(ctl->name), "%s", argc > 1 ? argv[1] : "none");
	ctl->cmd = DST_START;

	if (send(s, nlh, nlh->nlmsg_len, 0) < 0) {
		perror("dst-cn-ping: send");
		return 1;
	}
	n = recv(s, buf, sizeof(buf), 0);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(*msg) + sizeof(*ack))) {
		fprintf(stderr, "dst-cn-ping: no ack: %s\n",
			n < 0 ? strerror(errno) : "short message");
		return 1;
	}
	ack = (struct dst_ctl_ack_payload *)msg->data;
	printf("ack seq %u ack %u error %d\n", msg->seq, msg->ack, ack->error);
	return 0;
}
