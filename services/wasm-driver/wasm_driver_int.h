/* wasm_driver_int.h - state shared by the wasm backend's files. */
#ifndef WASM_DRIVER_INT_H
#define WASM_DRIVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "driver.pb-c.h"
#include "msc_cfg.h"
#include "msc_map.h"
#include "wasm_driver.h"
#include "wasm_runner.h"

/* The state of one computer while a command runs in it. */
struct wasm_running {
	pid_t pid;              /* the runner child; 0 when none */
	bool ended;             /* Stop/Delete/Restart ended the command */
};

struct wasm_driver {
	const struct msc_cfg *cfg;
	const char *backend;    /* "go_busybox" or "wasm" */
	char *dir;              /* <state>/<backend>: one folder per computer */
	char *runner;           /* the runner executable */
	char *module_so;        /* wasm: the compiled module; else NULL */
	char *module_name;      /* argv[0] the guest sees: the module's stem */
	char *image;            /* what list shows as the image */
	long max_memory_mib;
	long long fuel;         /* 0: unlimited */
	uint64_t disk_quota;    /* bytes per computer; 0: none */
	char disk_text[48];     /* what list says of it */
	bool shell_mode;        /* command mode available */
	struct msc_driver *svc;
	pthread_mutex_t mu;     /* guards running, leases, stopping */
	bool stopping;          /* no new runner, lease or temporary computer */
	struct msc_map *running; /* computer id -> struct wasm_running */
	struct msc_map *leases;  /* computer id -> int fd, under mu */
	struct wasm_runner spare; /* wasm_runner.c, under mu: pid 0 if none */
	int spare_req;          /* its request socket (while pid != 0) */
	bool spare_starting;    /* a spare is being started, under mu */
	/* wasm_runner_reap: runners done but still exiting, for the reaper
	 * thread (started at the first), all under mu */
	pid_t *ending;
	size_t n_ending, cap_ending;
	pthread_cond_t ending_cv;
	pthread_t reaper;
	bool reaper_on, reaper_stop;
	char *snap_dir;         /* <dir>/.snapshots */
	struct msc_snap_pins *pins; /* snapshots being read or deleted */
};

/* wasm_computers.c: the Driver operations on computer folders. */
int wasm_create(struct wasm_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen);
/* Records principal (msc_principal.h) in meta.json; wasm_owner reads it. */
int wasm_create_owned(struct wasm_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen);
int wasm_owner(struct wasm_driver *d, const char *id, char *tag,
    size_t taglen, char *err, size_t errlen);
int wasm_attach(struct wasm_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);
int wasm_restart(struct wasm_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);
int wasm_reset(struct wasm_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);
int wasm_stop(struct wasm_driver *d, const char *id, bool remove,
    char *err, size_t errlen);
int wasm_list(struct wasm_driver *d, Msc__V1__ComputerList *out,
    char *err, size_t errlen);
bool wasm_exists(struct wasm_driver *d, const char *id);

/*
 * The command running in each computer (d->running, under d->mu):
 * wasm_exec tracks its runner child while it runs (a driver that stops
 * kills it at once) and untracks it before reaping it;
 * wasm_end_running kills the one running in computer id, if any (Stop,
 * Delete, Restart, Reset, Restore).
 */
void wasm_running_track(struct wasm_driver *d, const char *id,
    struct wasm_running *w);
void wasm_running_untrack(struct wasm_driver *d, const char *id);
void wasm_end_running(struct wasm_driver *d, const char *id);
/*
 * At start: removes every temporary computer whose lease nobody holds
 * (wasm_lease_lapsed): its server is gone.
 */
void wasm_reap_lapsed(struct wasm_driver *d);

/* wasm_exec.c: runs one command in a runner child. */
int wasm_exec(struct wasm_driver *d, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen);

/*
 * wasm_lease.c: temporary computers' leases (a shared flock on the
 * folder's lease file while held), below the computers. wasm_lease_make
 * makes and locks it in a new folder (fd); wasm_lease_open locks an
 * existing one (fd, -ENOENT for a folder without one); wasm_lease_hold
 * keeps the fd as id's (taking it; false, the fd closed, when the driver
 * stops), wasm_lease_drop lets go. wasm_lease_lapsed locks id's lease
 * file exclusively when nobody holds it (fd, to close once the folder is
 * removed; -ENOENT without one, -EWOULDBLOCK while it is held).
 */
int wasm_lease_make(int folder_fd);
int wasm_lease_open(struct wasm_driver *d, const char *id);
bool wasm_lease_hold(struct wasm_driver *d, const char *id, int fd);
void wasm_lease_drop(struct wasm_driver *d, const char *id);
bool wasm_lease_held(struct wasm_driver *d, const char *id);
void wasm_lease_fini(struct wasm_driver *d);
int wasm_lease_lapsed(struct wasm_driver *d, const char *id);
/*
 * At stop (d->stopping set): removes the folder of every temporary
 * computer this driver holds, renaming them all out of sight first
 * (.gone-*, which the next start sweeps if we are killed meanwhile),
 * then deleting them for a bounded time (what is left stays hidden for
 * the next start), then letting go of their leases.
 */
void wasm_lease_remove_held(struct wasm_driver *d);
/* wasm_computers.c: removes computer id's folder (a failed create from a
 * snapshot). */
int wasm_remove(struct wasm_driver *d, const char *id);

/* wasm_fs.c: folder helpers that never follow a guest's symlinks. */
/* A fresh .gone-<id>-<random> name for what is being removed. */
void wasm_gone_name(const char *id, char *name, size_t len);
/* The first step of a removal: renames id in folder dirfd (borrowed) to
 * a new .gone-* name (gone, len), for wasm_rmtree_at. 0 or -errno. */
int wasm_hide(int dirfd, const char *id, char *gone, size_t len);
int wasm_rmtree_at(int dirfd, const char *name);
/* The same until deadline_ms (msc_now_ms): then -ETIMEDOUT, what is left
 * of name left in place. */
int wasm_rmtree_until(int dirfd, const char *name, uint64_t deadline_ms);
int wasm_computer_root(struct wasm_driver *d, const char *id, char *buf,
    size_t len);
/* The deepest folder a snapshot copies (two descriptors per level). */
#define WASM_TREE_MAX_DEPTH 256
/* The bytes under folder dirfd (borrowed) as the disk quota counts them
 * (wasi_quota.c): allocated bytes, at least 4096 an entry. 0 or -errno
 * (-ELOOP: deeper than WASM_TREE_MAX_DEPTH). */
int wasm_tree_size(int dirfd, uint64_t *bytes);
/*
 * Copies what is in folder sdir into the empty folder ddir (both
 * borrowed): folders, regular files (reflinked where the file system
 * can), symlinks as symlinks; modes and times kept; fifos, sockets and
 * devices left out. *bytes: what was copied, counted as wasm_tree_size;
 * past limit (0: none) it stops with -ENOSPC. 0 or -errno.
 */
int wasm_copy_tree(int sdir, int ddir, uint64_t limit, uint64_t *bytes);

/*
 * wasm_snapshot.c: snapshots (issue 31), each a copy of a computer's
 * root in <dir>/.snapshots/<id>/ with its meta.json.
 */
int wasm_snap_init(struct wasm_driver *d);
void wasm_snap_fini(struct wasm_driver *d);
int wasm_snapshot(struct wasm_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Snapshot *out, char *err, size_t errlen);
int wasm_restore(struct wasm_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen);
int wasm_snapshots(struct wasm_driver *d,
    const Msc__V1__SnapshotRequest *req, Msc__V1__SnapshotList *out,
    char *err, size_t errlen);
int wasm_snapshot_delete(struct wasm_driver *d,
    const Msc__V1__SnapshotRequest *req, char *err, size_t errlen);
int wasm_create_from(struct wasm_driver *d, const Msc__V1__CreateRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen);

#endif /* WASM_DRIVER_INT_H */
