/* docker_driver_int.h - state shared by the docker-driver's files. */
#ifndef DOCK_DRIVER_INT_H
#define DOCK_DRIVER_INT_H

#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>

#include <jansson.h>

#include "docker_api.h"
#include "docker_driver.h"
#include "docker_policy.h"
#include "driver.pb-c.h"
#include "docker_cfg.h"
#include "msc_cfg.h"
#include "msc_driver.h"
#include "msc_map.h"
#include "msc_pool.h"
#include "msc_rpc.h"

#define DOCK_NAME_PREFIX "kilntainer-"
#define DOCK_ERRLEN MSC_DRIVER_ERRLEN
/* The sandbox network and its host packet filter (docker_network.c). */
#define DOCK_NET_NAME "kilntainers-sandbox"
#define DOCK_NET_BRIDGE "msc-sandbox0"
#define DOCK_NFT_TABLE "kilntainers_sandbox"
/* Podman's, apart from Docker's on the same host. */
#define DOCK_NET_BRIDGE_PODMAN "msc-podman0"
#define DOCK_NFT_TABLE_PODMAN "kilntainers_podman"

struct dock_driver {
	const struct msc_cfg *cfg;
	struct dock_engine *engine;
	struct msc_driver *svc;     /* the Driver service (lib) */
	json_t *create_template;    /* body built from the flags, once */
	pthread_mutex_t mu;         /* guards validated, fx_on, fx_procs */
	pthread_mutex_t fx_mu;      /* one helper install at a time */
	bool validated;             /* engine answered and image present */
	/* The fast exec path (docker_fxsetup.c); fx_on under mu. */
	bool fx_on;                 /* new computers get the helper */
	const char *fx_src;         /* the helper binary to copy */
	char fx_root[256];          /* host folder of the helper */
	struct msc_map *fx_procs;   /* name -> struct fx_proc, under mu */
	int fx_kept;                /* their /proc fds kept open, under mu */
	bool net_sandbox;           /* computers go on DOCK_NET_NAME */
	bool net_via_engine;        /* not root: the engine loads the rules */
	bool tool;                  /* the command line's: serves no proxy */
	/* Under net_mu (set before the pool starts by dock_net_init): */
	bool net_rootless_checked;  /* the engine said it is not rootless */
	bool net_engine_logged;     /* said once that the engine loads them */
	char net_br[IF_NAMESIZE];   /* the network's bridge, when known */
	bool net_br_unseen;         /* not here yet (Podman makes it late) */
	pthread_mutex_t net_mu;     /* one network check at a time */
	/* Told the sandbox network's bridge and gateway (NULL: not known
	 * yet) when docker_network.c learns them: the policy's
	 * dock_pol_network, set by driver_start (the network calls nothing
	 * above it). */
	void (*net_learnt)(struct dock_driver *d, const char *br,
	    const char *gw);
	struct dock_pool *pool;     /* the warm pool (docker_pool.c) or NULL */
	struct dock_pol pol;        /* network modes (docker_policy.h) */
	struct dock_lease *lease;   /* temporaries' leases (docker_lease.c) */
	/* --disk-quota (docker_disk.c); the last two under mu. */
	uint64_t disk_quota;        /* bytes; 0: none */
	bool disk_size_opt;         /* new containers get StorageOpt size */
	char disk_text[256];        /* what computer_list says of it */
	struct msc_snap_pins *snap_pins; /* restores' images; deletes */
	struct dock_preview *preview;   /* preview URLs (docker_preview.h) */
	/* Served over tcp:// or tls+tcp:// on an address other hosts reach
	 * (the cluster layout): callers, and users, are elsewhere. */
	bool serves_hosts;

	/* The runtimes (docker_runtime.c), learned from /info; under mu. */
	char rt_default[64];        /* the engine's default runtime */
	char rt_gvisor[8][65];      /* the engine's runtimes that are gVisor */
	size_t n_rt_gvisor;
	bool rt_hides_helper;       /* --runtime is gVisor (set at start) */
	/* Waits for the commands handed off (docker_fxloop.h), through
	 * helpers or the Engine API exec; and ends the latter that no
	 * worker takes (docker_driver_exec.c, engine_spare). */
	struct dock_fxloop *fxloop;
	struct msc_pool *finisher;
};
#define DOCK_RT_GVISOR_MAX 8

/*
 * The OCI runtime (docker_runtime.c). dock_runtime_body puts --runtime in
 * the create template (after --docker-run-flag; a second, different name
 * is refused): 0 or -EINVAL, message printed. dock_runtime_name is the
 * template's runtime or NULL (the engine's default). dock_runtime_check
 * asks the engine's runtimes (GET /info, blocks up to 5 s): 0, or -EINVAL
 * with what to do in err when the engine lacks the runtime (printed too
 * when at_start); an engine that does not answer is an error only when
 * !at_start. dock_runtime_gvisor says whether runtime name rt is gVisor,
 * dock_runtime_hides_helper whether a container (inspect JSON) runs
 * under one (its helper's socket is then out of the driver's reach).
 * dock_runtime_label labels a create body with its runtime, when it
 * has one of its own; dock_runtime_of is what computer_list says: the
 * label, the inspect's HostConfig.Runtime, else the engine's default
 * (malloc'd; NULL: no memory). dock_runtime_explain rewrites a create's
 * error (err) about the runtime into what to do.
 */
int dock_runtime_body(const struct msc_cfg *cfg, json_t *body);
const char *dock_runtime_name(const struct dock_driver *d);
int dock_runtime_check(struct dock_driver *d, bool at_start, char *err,
    size_t errlen);
bool dock_runtime_gvisor(struct dock_driver *d, const char *rt);
bool dock_runtime_hides_helper(struct dock_driver *d, json_t *ctr);
void dock_runtime_label(json_t *body);
char *dock_runtime_of(struct dock_driver *d, json_t *ctr, json_t *labels);
void dock_runtime_explain(struct dock_driver *d, const char *id, char *err,
    size_t errlen);

/* docker_disk.c: --disk-quota by the storage driver's size option. */
/* Parses --disk-quota (0, or -EINVAL after saying why). */
int dock_disk_init(struct dock_driver *d);
/* Asks the engine (blocks up to 5 s) whether its storage has a size
 * option, and says so in computer_list and, when not, in the log. */
void dock_disk_probe(struct dock_driver *d);
/* Puts the size option in a create body, when the engine has one. */
void dock_disk_body(struct dock_driver *d, json_t *body);
/*
 * Whether a create of body failed for its size option (err): then the
 * option is off from now on and the caller strips it and creates again.
 */
bool dock_disk_refused(struct dock_driver *d, json_t *body, const char *err);
void dock_disk_strip(json_t *body);
/* What computer_list says of a computer's disk (malloc'd; NULL: no memory). */
char *dock_disk_text(struct dock_driver *d);

/* Blocking operations, run on the pool (docker_computers.c). */
int dock_validate(struct dock_driver *d, char *err, size_t errlen);
int dock_create(struct dock_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen);
/*
 * The principal's tag (msc_principal.h) in the label MSC_PRINCIPAL_LABEL
 * of a computer it makes cold (not on a warm temporary one, whose labels
 * were set before anyone asked; a temporary computer is its session's
 * alone anyway), and read back by dock_owner.
 */
int dock_create_owned(struct dock_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen);
int dock_owner(struct dock_driver *d, const char *id, char *tag,
    size_t taglen, char *err, size_t errlen);
int dock_attach(struct dock_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int dock_restart(struct dock_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);
int dock_reset(struct dock_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int dock_stop(struct dock_driver *d, const char *id, bool remove, char *err,
    size_t errlen);
/*
 * A new computer from `image` (a snapshot's), never a warm one, that
 * records `principal` (as dock_create_owned); and a computer recreated
 * from `image` (NULL: the configured one, a factory reset), same id,
 * mode and principal.
 */
int dock_create_image(struct dock_driver *d, const char *id, bool temporary,
    const char *image, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen);
int dock_recreate(struct dock_driver *d, const char *id, const char *image,
    Msc__V1__Computer *out, char *err, size_t errlen);
/*
 * Snapshots (docker_snapshot.c): committed images, labelled with who
 * made them, of which computer, when. The msc_driver_ops of the same
 * names.
 */
int dock_snapshot(struct dock_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Snapshot *out, char *err, size_t errlen);
int dock_restore(struct dock_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen);
int dock_snapshots(struct dock_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__SnapshotList *out, char *err, size_t errlen);
int dock_snapshot_delete(struct dock_driver *d,
    const Msc__V1__SnapshotRequest *req, char *err, size_t errlen);
int dock_create_from(struct dock_driver *d, const Msc__V1__CreateRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen);
int dock_list(struct dock_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen);
/*
 * Shared with the warm pool (docker_pool.c): a computer's fields from a
 * container inspect or list row, and the readiness check of container
 * `name` (through its helper when `helper`, waiting for its socket).
 */
int dock_fill_computer(struct dock_driver *d, json_t *ctr, const char *id,
    Msc__V1__Computer *out, const char *fallback_image, const char *driver_id);
int dock_readiness(struct dock_driver *d, const char *name, bool helper,
    bool created, char *err, size_t errlen);
/* The Exec op (docker_driver_exec.c). */
int dock_exec(struct dock_driver *d, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen);
/* msc_driver_ops.exec_start: through the helper, or else the Engine API
 * exec, waited for by the exec loop (d->fxloop). */
int dock_exec_start(void *be, const Msc__V1__ExecRequest *req,
    struct msc_exec *x, char *err, size_t errlen);
/*
 * The background processes running in computer `id` now (its helper's
 * list), or -errno: msc_driver_ops.processes. Blocking (3 s at most).
 */
int dock_processes(void *be, const char *id);

/*
 * The fast exec path (docker_fxsetup.c, docker_fxroot.c). dock_fx_init
 * decides at start whether new computers get the helper (no I/O).
 * dock_fx_prepare checks that the helper's host folder is private and
 * installs the helper there (needed before each start of a container
 * that runs it): 0 or a negative errno with a message (the fast path is
 * then off). dock_fx_body adapts a create body (helper mount, /.msc
 * tmpfs, Entrypoint, no Init); 1 when the helper is not used.
 * dock_fx_uses_helper says whether a container (inspect JSON) has the
 * helper and its /.msc tmpfs; dock_fx_mounts_helper whether it runs the
 * helper at all (also those of earlier builds, whose /.msc was a host
 * folder: they need the helper file at each start but get the Engine
 * API exec).
 * dock_fx_track records a container's helper from its inspect JSON
 * (borrowed) and dock_fx_forget drops it when the container is gone
 * (also removing the host folder of /.msc an earlier build made).
 * dock_fx_wait waits up to `ms` for the helper's socket. dock_fx_awake
 * says whether the helper's cgroup is not frozen (docker pause): 1 or 0,
 * or a negative errno when that cannot be told here. dock_fx_exec
 * runs an exec through the helper when one listens for `name` (-ENOTCONN
 * when none does: the caller uses the Engine API); with the
 * errors of dock_run().
 * dock_fx_root_open opens `root` if it is private to our uid (creating it
 * 0700 if missing): the fd or a negative errno with a message.
 * dock_fx_root_install copies the helper at `src` (NULL: none was found)
 * into the private `root`: 0 or a negative errno with why. docker_fxroot.c
 * (the host folder) calls nothing of docker_fxsetup.c.
 */
#define DOCK_FX_TMPFS_OPTS \
	"rw,nosuid,nodev,noexec,size=64k,nr_inodes=32,mode=0700"
/* Podman 4.3 refuses nr_inodes ("unknown mount option"): size only. */
#define DOCK_FX_TMPFS_OPTS_PODMAN \
	"rw,nosuid,nodev,noexec,size=64k,mode=0700"
void dock_fx_init(struct dock_driver *d);
bool dock_fx_enabled(struct dock_driver *d);
void dock_fx_disable(struct dock_driver *d, const char *why);
int dock_fx_prepare(struct dock_driver *d, char *err, size_t errlen);
void dock_fx_helper_path(struct dock_driver *d, char *out, size_t len);
int dock_fx_body(struct dock_driver *d, json_t *body);
bool dock_fx_uses_helper(json_t *ctr);
bool dock_fx_mounts_helper(json_t *ctr);
void dock_fx_track(struct dock_driver *d, const char *name, json_t *ctr);
void dock_fx_forget(struct dock_driver *d, const char *name);
/* Frees what dock_fx_track recorded (at the driver's end). */
void dock_fx_procs_free(struct dock_driver *d);
int dock_fx_remove_legacy(struct dock_driver *d, const char *name);
int dock_fx_root_install(const char *root, const char *src, char *why,
    size_t len);
int dock_fx_wait(struct dock_driver *d, const char *name, int ms);
int dock_fx_awake(struct dock_driver *d, const char *name);
int dock_fx_exec(struct dock_driver *d, const char *name,
    const struct dock_exec_req *req, struct dock_exec_res *res, char *err,
    size_t errlen);
int dock_fx_root_open(const char *root, char *err, size_t errlen);
/*
 * The helper's folder of `name` (as fx_open in docker_fxsetup.c): an fd
 * to keep open while `dir` is used, or a negative errno (-ENOTSUP: no
 * helper; -ENOENT/-ESRCH: not known or stale, and ask_engine was false).
 * Blocks only with ask_engine (one inspect when what is known is stale).
 */
int dock_fx_reach(struct dock_driver *d, const char *name, bool ask_engine,
    char *dir, size_t len);

/*
 * The sandbox network (docker_network.c). dock_net_init (after the
 * engine handle exists) decides at start whether computers join
 * DOCK_NET_NAME (networking on, no --network from the operator) and
 * refuses (-EPERM, message printed) when its packet filter could be
 * installed neither by the driver (root) nor through the engine (a local
 * rootful engine whose socket the driver may use). dock_net_ensure makes
 * the network if missing and (re)loads the host rules before a create: 0,
 * or a negative errno with a message. Blocking. dock_net_confirm, once
 * a new container on the network runs, checks that a bridge the engine
 * had not made yet at dock_net_ensure (Podman) is in the driver's network
 * namespace, where the rules went: 0 or -ENXIO with a message; the caller
 * removes the container. No engine call. dock_net_bridge is the name of the
 * bridge the driver asks its engine for (static storage).
 */
int dock_net_init(struct dock_driver *d);
int dock_net_ensure(struct dock_driver *d, char *err, size_t errlen);
int dock_net_confirm(struct dock_driver *d, char *err, size_t errlen);
const char *dock_net_bridge(const struct dock_driver *d);

/*
 * Loading the rules (docker_netload.c): the inet table, then the bridge
 * table, else a check (or, as root, the switch) of br_netfilter's hooks.
 * dock_nft_path is the host's nft or NULL. dock_nft_local runs it here
 * (root); dock_nft_engine has the engine run it in a short-lived
 * container on the host's network. 0 or a negative errno with a message.
 */
struct dock_nft_rules {
	char inet[6144];
	char bridge[1024];
};
const char *dock_nft_path(void);
int dock_nft_local(const struct dock_nft_rules *r, char *err, size_t errlen);
int dock_nft_engine(struct dock_driver *d, const struct dock_nft_rules *r,
    char *err, size_t errlen);

/*
 * A computer's container (docker_containers.c). dock_mine: whether a
 * container with these labels (borrowed) belongs to this driver: made by
 * it, or by no driver in particular (the reference, an older build);
 * drivers sharing one engine each see only their own computers.
 * dock_pool_born: whether they mark one of this driver's warm pool
 * (DOCK_POOL_LABEL, docker_pool.h).
 * dock_find inspects kilntainer-<id> and checks it is ours: 0 with the
 * inspect JSON in *ctrp (the caller's), or a negative errno with a
 * message. dock_run runs req in container `name` through its helper
 * when one listens, else through the Engine API (*fastp says which);
 * besides the errors of dock_exec_run(), -ECONNRESET or -EPROTO when the
 * helper failed mid-command. Blocking.
 */
bool dock_mine(const struct dock_driver *d, json_t *labels);
bool dock_pool_born(const struct dock_driver *d, json_t *labels);
int dock_find(struct dock_driver *d, const char *id, json_t **ctrp,
    char *err, size_t errlen);
int dock_run(struct dock_driver *d, const char *name,
    const struct dock_exec_req *req, struct dock_exec_res *res,
    bool *fastp, char *err, size_t errlen);

/* Builds the create body template from cfg; prints startup errors. */
int dock_build_template(const struct msc_cfg *cfg, json_t **outp);

#endif /* DOCK_DRIVER_INT_H */
