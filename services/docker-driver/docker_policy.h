/*
 * docker_policy.h - each computer's network mode on the sandbox network
 * (docker_network.c), and the allowlist proxy (docker_proxy.c).
 *
 * Every computer on DOCK_NET_NAME is in one mode: open (the sandbox
 * rules only), none (nothing leaves it: its address is in the policy
 * table's set offline4) or allowlist (its address is in proxied4: it may
 * reach only the proxy's port on the host, nothing else, DNS included;
 * the proxy, a squid the driver runs outside every container, decides
 * each request by the computer's policy file). The policy table
 * (DOCK_POL_TABLE, inet) sits before the sandbox table and is never
 * deleted, so a driver that dies leaves its computers as they were:
 * proxied ones can reach no more than a proxy that is gone.
 *
 * The mode a computer was made with is its label kilntainers.network;
 * the lists come from the server's flags (--network-allow,
 * --network-deny). dock_pol_apply (re)registers a computer's current
 * address under its mode: after every start, before any command runs.
 */
#ifndef DOCKER_POLICY_H
#define DOCKER_POLICY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "driver.pb-c.h"

#include "msc_netpolicy.h"

struct dock_driver;
struct msc_cfg;

#define DOCK_POL_TABLE "kilntainers_policy"
#define DOCK_POL_MARK_IN "0x4d534350"   /* a proxied computer to its proxy */
#define DOCK_POL_MARK_OUT "0x4d534351"  /* the proxy's connections out */
#define DOCK_POL_LABEL "kilntainers.network"
#define DOCK_PROXY_PORT_MIN 30128       /* the proxies' ports on the host */
#define DOCK_PROXY_PORT_SPAN 64

/* A header the proxy adds to plain HTTP requests for one domain. */
struct dock_pol_cred {
	char *domain, *header, *value;  /* owned; value wiped at the end */
};

struct dock_pol {
	enum msc_net_mode def_mode;     /* the server's default */
	char **allow, **deny;           /* owned */
	size_t nallow, ndeny;
	const char *dns;                /* --proxy-dns-server (cfg's) */
	struct dock_pol_cred *creds;    /* --proxy-credential, owned */
	size_t ncreds;
	pthread_mutex_t mu;             /* the rest */
	char br[16], gw[16];            /* the sandbox bridge, its address */
	pid_t proxy_pid;                /* 0: not running */
	int proxy_port;
	bool proxy_mark;                /* the kernel checks its addresses */
	char dir[256];                  /* its folder: config, logs, files */
	pthread_t restorer;             /* dock_pol_restore_start's */
	pthread_cond_t restore_cv;      /* restore_stop set */
	bool restoring;                 /* restorer is to be joined */
	bool restore_stop;              /* the driver ends: restorer returns */
};

/* A computer's policy: its mode and, in allowlist mode, its lists. */
struct dock_pol_lists {
	enum msc_net_mode mode;
	char **allow, **deny;           /* owned (or borrowed: see below) */
	size_t nallow, ndeny;
	char cid[65];                   /* its container; "": not bound yet */
	bool proxied;                   /* that container has proxy variables */
};

/*
 * docker_policy_state.c: a policy set on a running computer outlives the
 * driver in the host file BASE/computers/<id> (BASE: dock_pol_base),
 * bound to the computer's container (its id, once it exists): a file
 * bound to another container is that of a computer removed behind the
 * driver's back, forgotten when seen. dock_pol_state_load: 0 with *l
 * (free with dock_pol_lists_free), or -ENOENT when the computer keeps the
 * mode it was made with. dock_pol_state_save writes it (borrowing l).
 * dock_pol_describe: "open", "none" or "allowlist: a, *.b; deny: c" (a
 * new string or NULL).
 */
int dock_pol_base(char *out, size_t len);
int dock_pol_state_load(const char *id, struct dock_pol_lists *l);
int dock_pol_state_save(const char *id, const struct dock_pol_lists *l);
void dock_pol_state_remove(const char *id);
void dock_pol_lists_free(struct dock_pol_lists *l);
char *dock_pol_describe(const struct dock_pol_lists *l);
/*
 * The policy of computer `id` with container `cid` and labels `labels`
 * (inspect JSON): its state file (unless bound to another container:
 * then removed), else its label's mode with the server's lists
 * (borrowed: free with dock_pol_lists_free only when *owned).
 */
void dock_pol_current(struct dock_driver *d, const char *id,
    const char *cid, json_t *labels, struct dock_pol_lists *l, bool *owned);
/*
 * Variables for each command on computer `id`: empty proxy variables
 * when its container has them but its policy is no longer allowlist
 * (they would name a proxy it cannot reach), else NULL. Static.
 */
const char *const *dock_pol_exec_env(struct dock_driver *d, const char *id);

/*
 * Driver/Create with a policy: checks it and records it (the state file)
 * for the computer about to be made (msc_driver_ops.set_network).
 */
int dock_pol_set_create(void *be, const char *id,
    const Msc__V1__NetworkPolicy *np, char *err, size_t errlen);
/* The mode for a new computer `id`: its recorded one, else the default. */
enum msc_net_mode dock_pol_mode_for(struct dock_driver *d, const char *id);

/* From the flags, at start: 0 or -EINVAL (message printed). */
int dock_pol_init(struct dock_driver *d);
void dock_pol_fini(struct dock_driver *d);
/* The sandbox network's bridge and gateway: docker_network.c's news
 * (dock_net_init, dock_net_ensure), through d->net_learnt. */
void dock_pol_network(struct dock_driver *d, const char *br, const char *gw);
/* The mode for a new computer (the server's default). */
enum msc_net_mode dock_pol_default(const struct dock_driver *d);
/*
 * Adapts a create body for `mode`: the label, and in allowlist mode the
 * proxy variables (starting the proxy): 0 or a negative errno with err.
 */
int dock_pol_body(struct dock_driver *d, enum msc_net_mode mode,
    json_t *body, char *err, size_t errlen);
/*
 * Registers container `cid` of computer `id` under its mode (its label,
 * else the default): 0, or a negative errno with err (the caller must
 * then not let the computer run commands).
 */
int dock_pol_apply(struct dock_driver *d, const char *id, const char *cid,
    char *err, size_t errlen);

/*
 * docker_policy.c, for the state and the operator's view: the proxy port
 * container `ctr` (inspect JSON) was given (its http_proxy), or 0; and
 * the lists its proxy enforces (the proxy's file for its address, as
 * the server that runs the proxy wrote it): 0 with *l (owned), or
 * -ENOENT.
 */
int dock_pol_proxy_port(json_t *ctr);
int dock_pol_proxy_view(json_t *ctr, struct dock_pol_lists *l);

/*
 * docker_policy_restore.c: at the driver's start, in the background:
 * each running computer of this driver made in allowlist mode is applied
 * again (its proxy started), and the proxy's files of addresses no such
 * computer has are removed. dock_pol_restore_wait joins it.
 */
int dock_pol_restore_start(struct dock_driver *d);
void dock_pol_restore_wait(struct dock_driver *d);

/*
 * Forgets a removed container (inspect JSON from before the removal):
 * its policy file and its address's set memberships, so that the next
 * computer given the address starts from nothing.
 */
void dock_pol_release(struct dock_driver *d, json_t *ctr);

/* docker_proxy_cred.c: --proxy-credential(-file), at start; freeing. */
int dock_pol_creds_init(struct dock_pol *p, const struct msc_cfg *cfg);
void dock_pol_creds_fini(struct dock_pol *p);

/*
 * docker_proxy_acl.c: the addresses the proxy refuses (squid's
 * msc_blocked list, space-separated): the blocked ranges, bridge `br`'s
 * subnet, every address of the host (getifaddrs; _of: those of `list`).
 * A new string, or NULL.
 */
struct ifaddrs;
char *dock_proxy_blocked(const char *br);
char *dock_proxy_blocked_of(const struct ifaddrs *list, const char *br);

/*
 * docker_proxy.c, under pol->mu. dock_proxy_ensure starts the proxy
 * unless it runs, on port `want` when free (0: its earlier port, else
 * the driver id's). dock_proxy_serve makes sure a proxy serves the
 * computers whose variables name `port`: ours (started there if it does
 * not run and nothing answers there; `mine`: they are this driver's, so
 * what answers there may be our earlier run's proxy, ending: it is given
 * 2 s), 1 when another proxy answers there, or a negative errno with err
 * (-EADDRINUSE: ours listens elsewhere).
 */
int dock_proxy_ensure(struct dock_driver *d, int want, char *err,
    size_t errlen);
int dock_proxy_serve(struct dock_driver *d, int port, bool mine, char *err,
    size_t errlen);
/* Whether something accepts connections on the gateway's `port`. */
bool dock_proxy_answers(struct dock_driver *d, int port);
void dock_proxy_stop(struct dock_driver *d);

#endif
