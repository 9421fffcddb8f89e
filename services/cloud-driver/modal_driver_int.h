/* modal_driver_int.h - state shared by the Modal backend's files. */
#ifndef MODAL_DRIVER_INT_H
#define MODAL_DRIVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "driver.pb-c.h"
#include "cloud_ports.h"
#include "grpc_call.h"
#include "modal_client.pb-c.h"
#include "modal_conf.h"
#include "modal_conv.h"
#include "modal_driver.h"
#include "modal_task_command_router.pb-c.h"
#include "msc_cfg.h"
#include "msc_driver_known.h"
#include "cloud_snap.h"

#define MODAL_ERRLEN 1024
#define MODAL_SVC "/modal.client.ModalClient/"
#define MODAL_ROUTER_SVC "/modal.task_command_router.TaskCommandRouter/"

typedef Modal__Client__SandboxInfo ModalSandboxInfo;
typedef Modal__Client__GenericResult ModalResult;

/* What the driver remembers of a computer's sandbox. */
struct modal_known {
	char sandbox_id[128];
	char task_id[128];
	char router_url[512];
	char jwt[4096];         /* the command router's */
	int64_t jwt_exp;        /* Unix seconds; 0: unknown */
	bool temporary;
};

struct modal_driver {
	const struct msc_cfg *cfg;
	struct grpc_target api;         /* the control plane */
	struct modal_creds creds;
	const char *app_name;
	const char *image;              /* --image */
	uint32_t milli_cpu, memory_mb, lifetime_s, gpu_count;
	char gpu_type[64];
	uint32_t ports[MODAL_PORTS_MAX];        /* --modal-ports */
	size_t n_ports;
	struct cloud_ports *exposed;    /* exposed ports (modal_ports.c) */
	struct msc_driver *svc;
	pthread_mutex_t build_mu;       /* one image build at a time */
	pthread_mutex_t mu;             /* guards the rest but `known` */
	char app_id[128];
	char image_id[128];             /* --image, built */
	char auth_token[4096];          /* x-modal-auth-token */
	int64_t auth_refresh_at;        /* Unix seconds */
	struct msc_known *known;        /* computer id -> struct modal_known */
	struct msc_lease_renewer *lease; /* temporaries (modal_lease.c) */
	char dict_id[128];              /* the snapshots' Dict, once known */
	struct cloud_snap snap;         /* snapshots (modal_snapshot.c) */
};

/* The snapshot calls of Modal (modal_snapshot.c), for cloud_snap_init. */
extern const struct cloud_snap_ops modal_snap_ops;

/* Control-plane calls (modal_api.c). */
int modal_call(struct modal_driver *d, const char *method,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rdesc,
    ProtobufCMessage **respp, uint64_t timeout_ms, bool retry, char *err,
    size_t errlen);
int modal_call_stream(struct modal_driver *d, const char *method,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rdesc,
    int (*fn)(const ProtobufCMessage *, void *), void *arg,
    uint64_t timeout_ms, char *err, size_t errlen);
int modal_app(struct modal_driver *d, char *app_id, size_t len, char *err,
    size_t errlen);
int modal_image(struct modal_driver *d, char *image_id, size_t len,
    char *err, size_t errlen);
int modal_router_access(struct modal_driver *d, struct modal_known *k,
    char *err, size_t errlen);
/* The router endpoint of k, and its "authorization" metadata. */
int modal_router_target(struct modal_driver *d, const struct modal_known *k,
    struct grpc_target *t, struct curl_slist **mdp, char *err,
    size_t errlen);
int modal_router_call(struct modal_driver *d, struct modal_known *k,
    const char *method, const ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *rdesc, ProtobufCMessage **respp,
    uint64_t timeout_ms, char *err, size_t errlen);

/*
 * Finding a computer's sandbox (modal_lookup.c). modal_lookup: what the
 * driver knows of computer id's sandbox, else found by tag and connected
 * (remembered). modal_remember and modal_forget keep d->known and hold
 * or drop a temporary's lease. modal_died: 0 while sbx runs, else a
 * "died" error (forgotten). modal_list_page: the app's sandboxes with tag
 * name=value (NULL: every one of ours), created before `before` (0:
 * newest). modal_find: id's running sandbox (*sp points into *respp,
 * which the caller frees), or -ENOENT (forgotten). modal_connect waits
 * for sandbox sbx's task and its command router, then remembers k.
 * modal_tag_temporary: whether s was made temporary.
 */
int modal_lookup(struct modal_driver *d, const char *id,
    struct modal_known *k, char *err, size_t errlen);
void modal_remember(struct modal_driver *d, const char *id,
    const struct modal_known *k);
void modal_forget(struct modal_driver *d, const char *id);
int modal_died(struct modal_driver *d, const char *id, const char *sbx,
    char *err, size_t errlen);
int modal_list_page(struct modal_driver *d, const char *name,
    const char *value, double before,
    Modal__Client__SandboxListResponse **respp, char *err, size_t errlen);
int modal_find(struct modal_driver *d, const char *id,
    Modal__Client__SandboxListResponse **respp, ModalSandboxInfo **sp,
    char *err, size_t errlen);
int modal_connect(struct modal_driver *d, const char *id, const char *sbx,
    bool temporary, struct modal_known *k, char *err, size_t errlen);
bool modal_tag_temporary(const ModalSandboxInfo *s);

/* Sandboxes (modal_sandboxes.c). */
int modal_terminate(struct modal_driver *d, const char *sbx, char *err,
    size_t errlen);

/*
 * Saves computer id's filesystem (SandboxSnapshotFs): the new image's id,
 * its sandbox's and lifecycle.
 */
int modal_snapshot_fs(struct modal_driver *d, const char *id, char *image_id,
    size_t len, char *sbx, size_t sbxlen, bool *temporary, char *principal,
    size_t plen, char *err, size_t errlen);
/*
 * Replaces computer id's sandbox by one of image_id (id and lifecycle
 * kept); when that fails, by one of the configured image, and err says so.
 */
int modal_replace(struct modal_driver *d, const char *id, const char *image_id,
    Msc__V1__Computer *out, char *err, size_t errlen);
/* modal_create_owned from image_id (a snapshot's). */
int modal_create_image(struct modal_driver *d, const char *id, bool temporary,
    const char *image_id, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen);
int modal_create(struct modal_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen);
/* modal_create recording principal (msc_principal.h) in a tag of the
 * sandbox; modal_owner reads it ("" for none; -ENOENT: no such computer).
 * Restart, reset and restore carry it to the new sandbox. */
int modal_create_owned(struct modal_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen);
int modal_owner(struct modal_driver *d, const char *id, char *tag,
    size_t taglen, char *err, size_t errlen);
int modal_attach(struct modal_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);
int modal_restart(struct modal_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);
int modal_reset(struct modal_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);
int modal_stop(struct modal_driver *d, const char *id, bool remove,
    char *err, size_t errlen);
int modal_list(struct modal_driver *d, Msc__V1__ComputerList *out,
    char *err, size_t errlen);

/* The Exec op (modal_exec.c). */
int modal_exec(struct modal_driver *d, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen);
/* The running background processes, for Computer.processes_ended. */
int modal_processes(void *be, const char *id);

/* Driver/ExposePort: the port's tunnel, if the sandbox was made with one
 * (modal_ports.c). */
int modal_expose_port(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Preview *out, char *err, size_t errlen);
/* Sets def's open_ports to the --modal-ports (specs: MODAL_PORTS_MAX
 * entries of the caller's, kept until the create is sent). */
void modal_ports_open(struct modal_driver *d, Modal__Client__Sandbox *def,
    Modal__Client__PortSpecs *specs, Modal__Client__PortSpec *spec,
    Modal__Client__PortSpec **specp);

/* Commands through the task's command router (modal_run.c). */
struct modal_run {
	char *out, *err;
	size_t olen, elen;
	int exit_code;
	bool exited, timed_out, over;
	bool cancelled;         /* Driver/Cancel while it ran */
};
/*
 * Runs argv on a known sandbox: 0 with r filled (r->exited, r->timed_out,
 * r->over or r->cancelled; r's buffers are the caller's, for
 * modal_run_fini), or a failure of the router or the transport; *startedp
 * tells whether the command was started (so it may still run). workdir,
 * marker (the KILNTAINERS_EXEC value) and in may be NULL. A command with
 * a marker (the agent's) stops when this thread's command is cancelled
 * (msc_driver_cancel_fd). k's router JWT may be renewed. Blocking.
 */
int modal_run_command(struct modal_driver *d, struct modal_known *k,
    const char *const *argv, size_t argc, const char *workdir,
    const char *marker, const ProtobufCBinaryData *in, uint32_t timeout_s,
    uint64_t limit, struct modal_run *r, bool *startedp, char *err,
    size_t errlen);
/* The same without workdir, marker or stdin, 1 MiB of output (readiness
 * checks, sweeps). */
int modal_exec_argv(struct modal_driver *d, struct modal_known *k,
    const char *const *argv, size_t argc, uint32_t timeout_s,
    struct modal_run *r, char *err, size_t errlen);
void modal_run_fini(struct modal_run *r);

#endif /* MODAL_DRIVER_INT_H */
