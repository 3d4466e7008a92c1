/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DST internal interfaces.
 *
 * A node is either an export (serves a local block device) or a remote
 * (attaches an export as /dev/dstN).  Every control interface -- configfs,
 * the connector, sysfs -- works on the one registry kept by core.c and
 * calls the node operations declared here; the data path files (conn.c,
 * proto.c, trans.c, client.c, export.c) hang their state off the node
 * while it is enabled.
 */
#ifndef DST_INTERNAL_H
#define DST_INTERNAL_H

#include <linux/blk_types.h>
#include <linux/bvec.h>
#include <linux/configfs.h>
#include <linux/device.h>
#include <linux/in6.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <linux/uuid.h>
#include <linux/dst.h>

struct dentry;
struct net;
struct request;
struct blk_mq_tag_set;

#define DST_PATHLEN		256
#define DST_MAX_PATHS		4	/* addresses of one export */
#define DST_MAX_CONNS		16	/* connections of a remote */
#define DST_MAX_POLL_QUEUES	16	/* poll queues of a remote */
#define DST_KEY_MIN		16	/* bytes of shared key */
#define DST_PART_SHIFT		4	/* 15 partitions per disk */

enum dst_role {
	DST_ROLE_EXPORT,
	DST_ROLE_REMOTE,
};

/* Node states, as shown by the read-only "state" attributes. */
enum dst_state {
	DST_STATE_DISABLED,	/* configurable, nothing running */
	DST_STATE_STARTING,	/* enable in progress */
	DST_STATE_RUNNING,	/* serving / attached */
	DST_STATE_STOPPING,	/* disable in progress */
};

/*
 * I/O counters of a node, one set per CPU so the I/O path never shares a
 * cache line for them; summed when "stats" is read.
 */
enum dst_dir {
	DST_DIR_READ,
	DST_DIR_WRITE,
	DST_DIR_OTHER,		/* flush, discard, write zeroes */
	DST_DIR_NR
};

struct dst_io_stats {
	u64 ops[DST_DIR_NR];
	u64 bytes[DST_DIR_NR];
	u64 errors;
};

/* The link of a running remote node (docs/resilience.md). */
enum dst_link {
	DST_LINK_UP,		/* every connection works */
	DST_LINK_DEGRADED,	/* some do: I/O goes to the survivors */
	DST_LINK_RECONNECTING,	/* none: I/O is held */
	DST_LINK_FAILED,	/* none for fail_timeout_s: I/O fails */
};

/* Numeric parameters.  core.c holds their ranges and defaults. */
enum dst_param {
	DST_P_SIZE,
	DST_P_READ_ONLY,
	DST_P_MAX_PAGES,
	DST_P_CONNECTIONS,
	DST_P_QUEUE_DEPTH,
	DST_P_TRANS_SCAN_TIMEOUT,
	DST_P_TRANS_MAX_RETRIES,
	DST_P_KEEPALIVE_MS,
	DST_P_RECONNECT_DELAY_MS,
	DST_P_FAIL_TIMEOUT_S,
	DST_P_CRYPTO_THREADS,		/* export; may change while enabled */
	DST_P_POLL_QUEUES,
	DST_P_NR
};

/* Authentication and frame protection (crypto.c). */
struct dst_crypto_cfg {
	char hash[DST_NAMELEN];		/* "": hmac(sha256) when keyed */
	char cipher[DST_NAMELEN];	/* "": none */
	u8 key[DST_KEY_MAX];
	unsigned int key_len;		/* 0: no key, nothing protected */
};

/* What the administrator configured; read under node->lock. */
struct dst_config {
	/*
	 * Listen address (export: one), or the server's addresses (remote:
	 * up to DST_MAX_PATHS paths to the same export, docs/configfs.md).
	 */
	struct sockaddr_storage addrs[DST_MAX_PATHS];
	int nr_addrs;
	char device[DST_PATHLEN];	/* export: backing device path */
	char export[DST_NAMELEN];	/* remote: export to attach */
	s64 param[DST_P_NR];
	struct dst_crypto_cfg crypto;
	/*
	 * Export: its identity (null: derived at enable).  Remote: the
	 * identity its export must show (null: any, checked across paths).
	 */
	uuid_t uuid;
};

struct dst_export;
struct dst_remote;

struct dst_node {
	/* The device's reference count is the node's lifetime. */
	struct device dev;
	struct config_group group;
	struct list_head entry;		/* dst_nodes, under dst_nodes_lock */

	char name[DST_NAMELEN];
	enum dst_role role;

	/* Serialises configuration, enable and disable. */
	struct mutex lock;
	enum dst_state state;		/* written under lock, read lockless */
	bool enabled;
	bool removed;			/* leaving the registry: no enable */
	struct dst_config cfg;

	/*
	 * What the node runs with: the size the export serves or the
	 * remote negotiated.  Shown by "size" while enabled.
	 */
	u64 eff_size;

	/* A running remote's link, DST_LINK_*; written by client.c. */
	int link;
	/*
	 * A remote's partition scan is running (client.c): enable waits,
	 * without node->lock, on scan_wait for it to end or the link to go.
	 */
	bool scanning;
	wait_queue_head_t scan_wait;

	/* Data path state, present while enabled. */
	union {
		struct dst_export *exp;
		struct dst_remote *rem;
	};

	/* Its debugfs directory while it runs (debugfs.c), or NULL. */
	struct dentry *debugfs;

	/* An export's access list (security.c): dst_acl_rule.entry. */
	struct config_group acl_group;
	struct list_head acl;
	struct mutex acl_lock;		/* the list and its rules' values */
};

/* Permission bits of an access rule, as the connector's DST_SECURITY. */
#define DST_PERM_RO		DST_PERM_READ
#define DST_PERM_RW		(DST_PERM_READ | DST_PERM_WRITE)

/* One rule of an export's access list: exports/<name>/acl/<rule>/. */
struct dst_acl_rule {
	struct config_item item;
	struct list_head entry;		/* node->acl, under acl_lock */
	struct dst_node *node;		/* outlives its rules */
	char name[DST_NAMELEN];
	/* Under node->acl_lock: */
	int family;			/* 0 until addr is written */
	union {
		__be32 v4;
		struct in6_addr v6;
	} addr;
	u8 plen;
	int perm;			/* DST_PERM_RO or DST_PERM_RW */
};

static inline struct dst_node *dst_dev_to_node(struct device *dev)
{
	return container_of(dev, struct dst_node, dev);
}

/* security.c: access lists */
void dst_acl_init(struct dst_node *node);
struct dst_acl_rule *dst_acl_rule_create(struct dst_node *node,
					 const char *name);
void dst_acl_rule_remove(struct dst_acl_rule *rule);
void dst_acl_rule_free(struct dst_acl_rule *rule);
int dst_acl_rule_set_addr(struct dst_acl_rule *rule, const char *str);
ssize_t dst_acl_rule_show_addr(struct dst_acl_rule *rule, char *buf);
int dst_acl_rule_set_perm(struct dst_acl_rule *rule, const char *str);
ssize_t dst_acl_rule_show_perm(struct dst_acl_rule *rule, char *buf);
int dst_acl_check(struct dst_node *node, const struct sockaddr_storage *peer,
		  bool *ro);
bool dst_acl_empty(struct dst_node *node);
int dst_acl_rule_set_by_name(struct dst_node *node, const char *name,
			     const struct sockaddr_storage *ss, u8 plen,
			     int perm);
int dst_acl_rule_names(struct dst_node *node, char **names);

/* core.c: the registry and node operations */
struct dst_node *dst_node_create(const char *name, enum dst_role role);
void dst_node_remove(struct dst_node *node);
struct dst_node *dst_node_find(const char *name);
int dst_node_add(const char *name, enum dst_role role);
int dst_node_del(const char *name);
int dst_node_add_rule(struct dst_node *node,
		      const struct sockaddr_storage *ss, u8 plen, int perm);
int dst_node_set_sockaddr(struct dst_node *node,
			  const struct sockaddr_storage *ss);
void dst_node_get(struct dst_node *node);
void dst_node_put(struct dst_node *node);
int dst_node_enable(struct dst_node *node, bool on);
int dst_node_set_param(struct dst_node *node, enum dst_param p, s64 val);
int dst_node_bad_number(struct dst_node *node, enum dst_param p);
s64 dst_node_get_param(struct dst_node *node, enum dst_param p);
bool dst_param_applies(enum dst_param p, enum dst_role role);
int dst_node_set_addr(struct dst_node *node, const char *str);
int dst_node_set_device(struct dst_node *node, const char *path);
int dst_node_set_export(struct dst_node *node, const char *name);
int dst_node_set_hash(struct dst_node *node, const char *name);
int dst_node_set_cipher(struct dst_node *node, const char *name);
ssize_t dst_node_show_alg(struct dst_node *node, char *buf, bool cipher);
int dst_node_set_key(struct dst_node *node, const u8 *key, unsigned int len);
int dst_node_set_crypto(struct dst_node *node, const char *hash,
			const char *cipher, const u8 *key, unsigned int len);
ssize_t dst_node_show_key(struct dst_node *node, char *buf);
ssize_t dst_node_show_addr(struct dst_node *node, char *buf);
void dst_config_init(struct dst_config *cfg);
int dst_check_name(const char *name);
int dst_node_set_uuid(struct dst_node *node, const char *str);
ssize_t dst_node_show_uuid(struct dst_node *node, char *buf);
ssize_t dst_node_show_state(struct dst_node *node, char *buf);
ssize_t dst_node_show_size(struct dst_node *node, char *buf);
ssize_t dst_node_show_local(struct dst_node *node, char *buf);
ssize_t dst_node_show_device(struct dst_node *node, char *buf);
ssize_t dst_node_show_clients(struct dst_node *node, char *buf);
ssize_t dst_node_show_stats(struct dst_node *node, char *buf);
struct dst_io_stats __percpu *dst_stats_alloc(void);
void dst_stats_account(struct dst_io_stats __percpu *st, enum dst_dir dir,
		       u32 bytes, bool error);
ssize_t dst_stats_emit(struct dst_io_stats __percpu *st, char *buf,
		       ssize_t len);
const char *dst_role_name(enum dst_role role);
extern int dst_major;

/*
 * proto.c: the wire format.  Everything else works on these host-order
 * views; only proto.c converts to and from the big-endian frames.
 */
struct dst_msg {
	u8 cmd;			/* DST_CMD_*, with DST_CMD_REPLY in replies */
	u16 flags;		/* DST_F_* */
	u32 len;
	u32 status;		/* DST_ST_* */
	u64 id;
	u64 offset;
};

/* The client's HELLO. */
struct dst_hello {
	u16 version_min, version_max;
	u32 features;
	u32 max_io;
	char export[DST_NAMELEN];
	u64 session;		/* 0: the client asks for no fencing */
	u16 slot;
	u16 nr_queues, queue_depth;	/* the client's tag space */
};

/* What a connection negotiated: the server's welcome. */
struct dst_geometry {
	u16 version;
	u32 features;
	u64 size;
	u32 lbs, pbs;		/* logical and physical block size */
	u32 max_io;
	u32 max_discard;
	u32 max_write_zeroes;
	u8 uuid[16];		/* with DST_FEAT_UUID */
};

#define DST_HDR_SIZE		sizeof(struct dst_wire_hdr)
#define DST_HELLO_SIZE		sizeof(struct dst_wire_hello)
#define DST_WELCOME_SIZE	sizeof(struct dst_wire_welcome)

void dst_msg_encode(struct dst_wire_hdr *h, const struct dst_msg *m);
int dst_msg_decode(const struct dst_wire_hdr *h, struct dst_msg *m);
void dst_hello_encode(struct dst_wire_hello *w, const struct dst_hello *h);
int dst_hello_decode(const struct dst_wire_hello *w, struct dst_hello *h);
void dst_welcome_encode(struct dst_wire_welcome *w,
			const struct dst_geometry *g);
int dst_welcome_decode(const struct dst_wire_welcome *w,
		       struct dst_geometry *g);
int dst_check_request(const struct dst_msg *m, const struct dst_geometry *g,
		      const char **why);
u32 dst_request_payload(const struct dst_msg *m);
int dst_status_to_errno(u32 status);
void dst_hello_auth_encode(struct dst_wire_hello_auth *w, const u8 *nonce,
			   const char *hash, const char *cipher);
int dst_hello_auth_decode(const struct dst_wire_hello_auth *w, u8 *nonce,
			  char *hash, char *cipher);
void dst_seq_encode(u8 *out, u64 seq);
const char *dst_cmd_name(u8 cmd);

/* crypto.c: authentication and frame protection */
struct dst_crypto;
struct scatterlist;
const char *dst_crypto_hash_name(const struct dst_crypto_cfg *cfg);
int dst_crypto_check_hash(const char *name);
int dst_crypto_check_cipher(const char *name);
int dst_crypto_proofs(const struct dst_crypto_cfg *cfg, const void *hello,
		      size_t hello_len, const u8 *snonce, u8 *sproof,
		      u8 *cproof);
bool dst_crypto_proof_ok(const u8 *a, const u8 *b);
void dst_crypto_nonce(u8 *nonce);
struct dst_crypto_buf;
struct dst_crypto_buf *dst_crypto_buf_alloc(u32 max_io, bool bounce);
void dst_crypto_buf_free(struct dst_crypto_buf *b);
struct dst_crypto *dst_crypto_session(const struct dst_crypto_cfg *cfg,
				      bool server, const u8 *cnonce,
				      const u8 *snonce, u32 max_io,
				      struct dst_crypto_buf *buf);
void dst_crypto_free(struct dst_crypto *c);
unsigned int dst_crypto_tag_len(const struct dst_crypto *c);
u32 dst_crypto_max_segs(const struct dst_crypto *c);
bool dst_crypto_has_cipher(const struct dst_crypto *c);
struct scatterlist *dst_crypto_sg(struct dst_crypto *c, bool tx,
				  unsigned int nents);
const u8 *dst_crypto_seal(struct dst_crypto *c, const void *hdr,
			  unsigned int nents, u32 len, bool in_place);
struct page *dst_crypto_sealed(struct dst_crypto *c, unsigned int i);
u8 *dst_crypto_rx_tag(struct dst_crypto *c);
int dst_crypto_open(struct dst_crypto *c, const void *hdr,
		    unsigned int nents, u32 len);

#define DST_HELLO_AUTH_SIZE	sizeof(struct dst_wire_hello_auth)
#define DST_CHALLENGE_SIZE	sizeof(struct dst_wire_challenge)
#define DST_PROOF_SIZE		sizeof(struct dst_wire_proof)

/* watch.c: who reads a socket, and where */

/*
 * Who runs when a socket has something to read: see dst_sock_watch().
 * Lives as long as the socket is watched.
 */
struct dst_sock_watch {
	struct workqueue_struct *wq;
	struct work_struct *work;
	bool busy;	/* runs go to a neighbouring CPU */
	unsigned int quiet;	/* runs in a row that found one frame */
	unsigned long probe_at;	/* jiffies: when a quiet loop tries again */
	void (*data_ready)(struct sock *sk);	/* the socket's own ... */
	void (*state_change)(struct sock *sk);	/* ... chained to */
	/* Reads whole frames in softirq; true if it took all there was. */
	bool (*fast)(struct dst_sock_watch *w, struct sock *sk);
	bool claimed;	/* the loop reads: the fast path keeps off */
	/* dst_sock_watch_tx(): a sender queued when there is room again. */
	struct workqueue_struct *tx_wq;
	struct work_struct *tx_work;
	void (*write_space)(struct sock *sk);
	bool rx_off;	/* dst_sock_unwatch_rx(): the loop is not queued */
};

void dst_sock_watch(struct socket *sock, struct dst_sock_watch *w,
		    struct workqueue_struct *wq, struct work_struct *work,
		    bool (*fast)(struct dst_sock_watch *w, struct sock *sk));
void dst_sock_unwatch(struct socket *sock, struct dst_sock_watch *w);
void dst_sock_unwatch_rx(struct socket *sock, struct dst_sock_watch *w);
void dst_sock_watch_tx(struct socket *sock, struct dst_sock_watch *w,
		       struct workqueue_struct *wq, struct work_struct *work);
void dst_sock_watch_claim(struct socket *sock, struct dst_sock_watch *w);
void dst_sock_watch_ran(struct dst_sock_watch *w, unsigned int frames);

/* conn.c: one TCP socket */
struct socket *dst_sock_connect(struct net *net,
				const struct sockaddr_storage *addr,
				int timeout_ms);
struct socket *dst_sock_listen(struct net *net,
			       const struct sockaddr_storage *addr);
void dst_sock_setup(struct socket *sock, bool client);
void dst_sock_ack_now(struct socket *sock);
void dst_sock_nodelay(struct socket *sock);
void dst_sock_set_timeout(struct socket *sock, int timeout_ms);
void dst_sock_keepalive(struct socket *sock, int idle_s, int intvl_s, int cnt);
u32 dst_sock_queued_seq(struct socket *sock);
u32 dst_sock_unacked(struct socket *sock);
bool dst_sock_acked(struct socket *sock, u32 seq);
bool dst_sock_has_input(struct socket *sock, u32 bytes);
bool dst_sock_idle(struct socket *sock);
u32 dst_sk_inq(const struct sock *sk);
bool dst_sk_peek(struct sock *sk, void *buf, u32 len);
bool dst_sk_room_for(const struct sock *sk, u32 len);
int dst_sk_read_bvecs(struct sock *sk, u32 skip, const struct bio_vec *bv,
		      unsigned int nr, size_t len, size_t offset);
u64 dst_sock_progress(struct socket *sock);
void dst_sock_push(struct socket *sock);
int dst_sock_send(struct socket *sock, const void *buf, size_t len,
		  int flags);
int dst_sock_send_bvec(struct socket *sock, const struct bio_vec *bv,
		       bool zero_copy, int flags);
int dst_sock_send_nowait(struct socket *sock, const void *buf,
			 const struct bio_vec *bv, size_t off, size_t len,
			 bool zero_copy, int flags);
int dst_sock_recv(struct socket *sock, void *buf, size_t len);
int dst_sock_recv_bvecs(struct socket *sock, const struct bio_vec *bv,
			unsigned int nr, size_t len, size_t offset);
int dst_sock_discard(struct socket *sock, size_t len);
int dst_sock_peer(struct socket *sock, struct sockaddr_storage *ss);

/* trans.c: in-flight transactions of a remote node */
struct dst_cmd {
	spinlock_t lock;	/* a reply vs. timeout vs. connection loss */
	unsigned long flags;
	u32 gen;		/* bumped at every send: stale replies */
	u64 id;			/* on the wire, of the last copy sent */
	unsigned long start;	/* jiffies: first sent (debugfs's age) */
	u8 op;			/* DST_CMD_* sent */
	bool requeue;		/* completion: send again instead of ending */
	blk_status_t status;
	/* Where the last copy went: it must be fenced before another is sent. */
	int conn;		/* -1: never sent */
	u32 epoch;		/* of that connection */
	u32 seq;		/* TCP sequence just past that copy */
	unsigned int retries;	/* timeouts so far */
	struct list_head held;	/* on dst_remote's, no connection live */
	/* A polled request answered in softirq, for a task to end. */
	struct llist_node polled_node;
};

/* Where a copy of a transaction went: queue_rq takes it back if unsent. */
struct dst_trans_copy {
	u64 id;
	u32 gen;
	int conn;
	u32 epoch, seq;
};

/* What the timeout handler finds (dst_trans_state()). */
enum dst_trans_state {
	DST_TS_IDLE,		/* not on any connection */
	DST_TS_BUSY,		/* its pages are being sent or filled */
	DST_TS_INFLIGHT,	/* sent, its reply awaited */
	DST_TS_ORPHAN,		/* its connection died: awaits the fence */
};

struct dst_trans_gens;
struct dst_trans_gens *dst_trans_gens_alloc(unsigned int nr_hw_queues,
					    unsigned int depth);
void dst_trans_gens_free(struct dst_trans_gens *g);
u32 dst_trans_key(u64 id, u32 *gen);
struct request *dst_trans_find(struct blk_mq_tag_set *set, u64 id,
			       const char **why);
bool dst_trans_awaited(struct request *rq, u64 id);
void dst_trans_init(struct request *rq);
bool dst_trans_take_answer(struct request *rq);
bool dst_trans_hold_orphan(struct request *rq, bool fail);
void dst_trans_copy_fenced(struct request *rq);
u64 dst_trans_send_begin(struct dst_trans_gens *g, struct request *rq,
			 bool resend, const struct dst_trans_copy *to,
			 struct dst_trans_copy *was);
bool dst_trans_send_end(struct request *rq, bool unsent, bool resend,
			const struct dst_trans_copy *was);
void dst_trans_receive_begin(struct request *rq);
void dst_trans_receive_end(struct request *rq);
bool dst_trans_receiving(struct request *rq);
bool dst_trans_answer(struct request *rq, blk_status_t status);
enum dst_trans_state dst_trans_state(struct request *rq);
bool dst_trans_expired(struct request *rq);
unsigned int dst_trans_resend(struct request *rq);
void dst_trans_expire(struct request *rq);
void dst_trans_fail_orphan(struct request *rq, blk_status_t status);
void dst_trans_complete(struct request *rq);
unsigned int dst_trans_orphan(struct blk_mq_tag_set *set, int conn);
unsigned int dst_trans_resend_orphans(struct blk_mq_tag_set *set, int conn);
unsigned int dst_trans_fail_orphans(struct blk_mq_tag_set *set, int conn);
unsigned int dst_trans_fail_noretry(struct blk_mq_tag_set *set);
unsigned int dst_trans_count(struct blk_mq_tag_set *set);
struct seq_file;
void dst_trans_show(struct seq_file *m, struct blk_mq_tag_set *set);

/* client_node.c: remote nodes (client.h: their insides) */
int dst_remote_start(struct dst_node *node);
void dst_remote_stop(struct dst_node *node);
void dst_remote_set_param(struct dst_node *node, enum dst_param p, s64 val);
int dst_remote_set_connections(struct dst_node *node, int n);
void dst_remote_scan_wait(struct dst_node *node);
ssize_t dst_remote_show_device(struct dst_node *node, char *buf);
ssize_t dst_remote_show_stats(struct dst_node *node, char *buf);
const char *dst_remote_link_state(struct dst_node *node);
void dst_remote_show_inflight(struct dst_node *node, struct seq_file *m);
void dst_remote_show_conns(struct dst_node *node, struct seq_file *m);

/* export.c: export nodes (export.h: their insides) */
int dst_export_start(struct dst_node *node);
void dst_export_stop(struct dst_node *node);
void dst_export_set_crypto_threads(struct dst_node *node, int n);
int dst_export_resize(struct dst_node *node, u64 want);
void dst_export_get_uuid(struct dst_node *node, u8 *out);
ssize_t dst_export_show_clients(struct dst_node *node, char *buf);
ssize_t dst_export_show_stats(struct dst_node *node, char *buf);
void dst_export_show_inflight(struct dst_node *node, struct seq_file *m);
void dst_export_show_conns(struct dst_node *node, struct seq_file *m);

/* debugfs.c: /sys/kernel/debug/dst/{exports,remotes}/<name>/ */
void dst_debugfs_init(void);
void dst_debugfs_exit(void);
void dst_debugfs_add_node(struct dst_node *node);
void dst_debugfs_del_node(struct dst_node *node);

/* configfs.c */
int dst_configfs_init(void);
void dst_configfs_exit(void);
int dst_configfs_add_node(enum dst_role role, const char *name);
int dst_configfs_del_node(enum dst_role role, const char *name,
			  const char *rules, unsigned int nr_rules);
int dst_configfs_add_rule(const char *export, const char *rule);
int dst_configfs_del_rule(const char *export, const char *rule);

/* sysfs.c */
int dst_sysfs_init(void);
void dst_sysfs_exit(void);
void dst_sysfs_init_node(struct dst_node *node, void (*release)(struct device *));

/* connector.c */
int dst_connector_init(void);
void dst_connector_exit(void);

#endif /* DST_INTERNAL_H */
