/*
 * docker_api.h - the Docker Engine API (and Podman's compatible API) over
 * libcurl: a unix socket or plain tcp://.
 *
 * Every call is blocking, bounded by its own timeout, and thread-safe: a
 * call uses its own CURL easy handle, and struct dock_engine is read-only
 * after dock_engine_new() except for the negotiated version, which is set
 * once under a lock. Callers run these calls on a bounded worker pool.
 *
 * Errors: 0 on success or a negative errno. -ENOENT for 404 (no such
 * container/image), -EEXIST for 409 on create (name in use), -EBUSY for 409
 * on exec (container not running), -ECONNREFUSED when the engine does not
 * answer, -ETIMEDOUT past the deadline, -EPROTO for a malformed reply, -EIO
 * for other HTTP errors. Where a call takes `char *err, size_t errlen` it
 * writes a one-line human message there on failure (the engine's
 * {"message"} when there is one). Nothing here logs above debug, except
 * dock_image_ensure(), which reports pull progress on stderr.
 */
#ifndef DOCK_API_H
#define DOCK_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct dock_engine;

/*
 * Creates an engine handle. `host` is "unix:///path", "tcp://h:p" or NULL
 * (then $DOCKER_HOST, else unix:///var/run/docker.sock; for engine
 * "podman", $XDG_RUNTIME_DIR/podman/podman.sock when it exists, else
 * /run/podman/podman.sock). `engine_name` ("docker" or "podman") is used in
 * messages. Does no I/O. Caller owns *ep and frees it with
 * dock_engine_free().
 */
int dock_engine_new(const char *host, const char *engine_name,
    struct dock_engine **ep);
void dock_engine_free(struct dock_engine *e);

/*
 * GET /_ping, then picks the API version min(server max, 1.47), refusing
 * below 1.41. On failure writes "Cannot connect to <engine>. Is the
 * <engine> daemon running?" (plus a detail) into err. Later calls use the
 * negotiated version; calls made before a successful ping negotiate first.
 */
int dock_engine_ping(struct dock_engine *e, int timeout_ms, char *err,
    size_t errlen);

/* The engine name given to dock_engine_new() (borrowed). */
const char *dock_engine_name(const struct dock_engine *e);
/* The engine's unix socket path, or NULL for a tcp:// engine (borrowed). */
const char *dock_engine_socket(const struct dock_engine *e);
/* The base URL of its requests: "http://h:p" for a tcp:// engine (borrowed). */
const char *dock_engine_url(const struct dock_engine *e);

/* GET /info: *outp is a new reference. */
int dock_engine_info(struct dock_engine *e, int timeout_ms, json_t **outp,
    char *err, size_t errlen);

/*
 * Makes sure `image` exists: GET /images/{ref}/json, and when absent
 * POST /images/create?fromImage=..&tag=.. with progress lines on stderr,
 * failing on a mid-stream error. On failure err holds
 * "Failed to pull image '<image>'. Check that the image name is correct and
 * the registry is reachable." followed by the engine's detail.
 */
int dock_image_ensure(struct dock_engine *e, const char *image,
    int timeout_ms, char *err, size_t errlen);

/*
 * Makes `repo`:`tag` an empty image (no files, no config) unless it
 * exists: POST /images/create?fromSrc=- with an empty tar archive.
 */
int dock_image_empty(struct dock_engine *e, const char *repo,
    const char *tag, int timeout_ms, char *err, size_t errlen);

/*
 * Snapshots (docker_api_image.c). dock_image_commit: POST /commit of
 * `container` as image repo:tag, without pausing it, with the
 * Dockerfile instructions `changes` (LABEL, ENV); *outp is the reply
 * ({"Id": ...}). dock_image_list: GET /images/json with a label filter,
 * *outp the array. dock_image_inspect: GET /images/{ref}/json (-ENOENT
 * when missing). dock_image_remove: DELETE /images/{ref} (-EBUSY when a
 * container uses it, -ENOENT when missing).
 */
int dock_image_commit(struct dock_engine *e, const char *container,
    const char *repo, const char *tag, const char *const *changes, size_t n_changes,
    int timeout_ms, json_t **outp, char *err, size_t errlen);
int dock_image_list(struct dock_engine *e, const char *label_filter,
    int timeout_ms, json_t **outp, char *err, size_t errlen);
int dock_image_inspect(struct dock_engine *e, const char *ref, int timeout_ms,
    json_t **outp, char *err, size_t errlen);
int dock_image_remove(struct dock_engine *e, const char *ref, int timeout_ms,
    char *err, size_t errlen);

/*
 * POST /containers/create?name=<name> with the JSON body `body` (borrowed;
 * the caller builds Image, Cmd, Labels, HostConfig...), then
 * POST /containers/{id}/start. Writes the full container id (64 hex + NUL)
 * into id. On a failed start the created container is removed before
 * returning, so nothing is left behind.
 */
int dock_container_create(struct dock_engine *e, const char *name,
    json_t *body, int timeout_ms, char id[65], char *err, size_t errlen);

/* GET /containers/{id-or-name}/json; *outp is a new reference. */
int dock_container_inspect(struct dock_engine *e, const char *id_or_name,
    int timeout_ms, json_t **outp, char *err, size_t errlen);

/*
 * GET /containers/json?all=1&filters={"label":[label_filter]}; *outp is a
 * new reference to the JSON array.
 */
int dock_container_list(struct dock_engine *e, const char *label_filter,
    int timeout_ms, json_t **outp, char *err, size_t errlen);

/*
 * GET /networks/{name}: *outp is a new reference (-ENOENT when missing).
 * dock_network_inspect_libpod asks Podman's own API instead
 * (GET /v4.0.0/libpod/networks/{name}/json), whose answer names the
 * bridge interface (network_interface) that the compatible one leaves
 * out; only Podman answers it.
 * POST /networks/create with `body` (borrowed): -EEXIST on a conflict.
 */
int dock_network_inspect(struct dock_engine *e, const char *name,
    int timeout_ms, json_t **outp, char *err, size_t errlen);
int dock_network_inspect_libpod(struct dock_engine *e, const char *name,
    int timeout_ms, json_t **outp, char *err, size_t errlen);
int dock_network_create(struct dock_engine *e, json_t *body, int timeout_ms,
    char *err, size_t errlen);

/* POST /containers/{id}/start (304 counts as success). */
int dock_container_start(struct dock_engine *e, const char *id,
    int timeout_ms, char *err, size_t errlen);
/* POST /containers/{id}/stop?t=<grace_s> (304 counts as success). */
int dock_container_stop(struct dock_engine *e, const char *id, int grace_s,
    int timeout_ms, char *err, size_t errlen);
/* POST /containers/{id}/restart?t=<grace_s>. */
int dock_container_restart(struct dock_engine *e, const char *id,
    int grace_s, int timeout_ms, char *err, size_t errlen);
/* DELETE /containers/{id}?force=1&v=1 (404 counts as success). */
int dock_container_remove(struct dock_engine *e, const char *id,
    int timeout_ms, char *err, size_t errlen);

enum dock_exec_outcome {
	DOCK_EXEC_EXITED = 0,  /* the process ended; exit_code is valid */
	DOCK_EXEC_TIMEOUT,     /* timeout_ms passed; processes killed */
	DOCK_EXEC_LIMIT,       /* stdout+stderr passed output_limit; killed */
	DOCK_EXEC_CANCELLED,   /* the caller cancelled it (live); killed */
};

struct dock_exec_req {
	const char *container;     /* id or name (borrowed) */
	const char *const *argv;   /* NULL-terminated (borrowed) */
	const char *workdir;       /* NULL or absolute path */
	const char *const *env;    /* NULL or NULL-terminated "K=V" (borrowed) */
	const void *stdin_data;    /* used when has_stdin */
	size_t stdin_len;
	bool has_stdin;            /* false: the process sees EOF at once */
	int timeout_ms;            /* for the command itself */
	size_t output_limit;       /* combined stdout+stderr bytes allowed */
	/* The worker thread's current Driver command (msc_driver_live.h):
	 * cancelled through msc_driver_cancel_fd(), output reported. */
	bool live;
};

/*
 * Output bytes a command holds of a shared bound (--driver-output-buffer,
 * docker_fastexec.h's budget): all zero for none. Given back by
 * dock_fx_charge_release, or dock_exec_res_fini for a result's.
 */
struct dock_fx_budget;
struct dock_fx_holder;
struct dock_fx_charge {
	struct dock_fx_budget *budget;  /* NULL: nothing charged */
	struct dock_fx_holder *holder;  /* its principal's count; NULL: none */
	uint64_t bytes;
};

struct dock_exec_res {
	char *out;                 /* malloc'd, caller frees; NUL-terminated */
	size_t out_len;
	char *err;                 /* malloc'd, caller frees; NUL-terminated */
	size_t err_len;
	int exit_code;
	enum dock_exec_outcome outcome;
	/* What out and err hold of a bound until the result is freed or
	 * handed on (the exec loop's commands'; none otherwise). */
	struct dock_fx_charge charge;
};

/*
 * Runs one command in a running container: POST /containers/{id}/exec
 * (Tty false, AttachStdin only with stdin, Env carries a random
 * KILNTAINERS_EXEC=<hex> marker, WorkingDir), then POST /exec/{id}/start on
 * a raw connection (stdin written after the response headers, then a
 * half-close), demultiplexing the 8-byte-header frames, then
 * GET /exec/{id}/json for the exit code.
 *
 * On timeout or when combined output passes output_limit, it stops
 * reading and kills every process of that exec inside the container (a
 * second exec that scans /proc/<pid>/environ for the marker and sends
 * SIGKILL, falling back to killing the recorded process group), so nothing
 * keeps running; then outcome says why and out/err may be partial.
 *
 * -EBUSY when the container is not running (409), -ENOENT when it is gone
 * (404). On success res owns out/err; free them with dock_exec_res_fini().
 */
int dock_exec_run(struct dock_engine *e, const struct dock_exec_req *req,
    struct dock_exec_res *res, char *err, size_t errlen);
void dock_exec_res_fini(struct dock_exec_res *res);

/*
 * dock_exec_run in steps, for a caller that waits for many commands at
 * once (docker_fxloop.h). dock_exec_begin checks req, creates the exec
 * and starts its stream (blocking: engine calls with deadlines): a
 * negative errno with err when nothing was created, else 0 with *xp, the
 * exec in flight (req's stdin borrowed until dock_exec_finish, the rest
 * copied). Its output is reported to fn when set (dock_exec_on_output)
 * and, with req->live, to the thread's current command until then;
 * dock_exec_set_budget charges it to b as it comes (by the principal of
 * dock_exec_for_principal; "" none), -ENOBUFS with err when what came
 * already does not fit. Then, while dock_exec_fd is not -1: poll it for
 * dock_exec_events until dock_exec_deadline (msc_now_ms) and hand what
 * came to dock_exec_step: 0 to go on, 1 when the stream ended (*o: EXITED
 * at EOF, or LIMIT), or a negative errno with err set. dock_exec_stop
 * ends the watch without blocking: the step's result (or 1 with o
 * TIMEOUT or CANCELLED from the caller) and its err. dock_exec_finish
 * (blocking: exec inspect for the exit code, the kill of a command that
 * did not exit) gives res the result as dock_exec_run does, or a
 * negative errno with err, and frees x.
 */
struct dock_xexec;
int dock_exec_begin(struct dock_engine *e, const struct dock_exec_req *req,
    struct dock_xexec **xp, char *err, size_t errlen);
void dock_exec_on_output(struct dock_xexec *x, void (*fn)(void *arg,
    const void *p, size_t n), void *arg);
void dock_exec_for_principal(struct dock_xexec *x, const char *principal);
int dock_exec_set_budget(struct dock_xexec *x, struct dock_fx_budget *b,
    char *err, size_t errlen);
int dock_exec_fd(const struct dock_xexec *x);
short dock_exec_events(const struct dock_xexec *x);
int64_t dock_exec_deadline(const struct dock_xexec *x);
int dock_exec_step(struct dock_xexec *x, short revents,
    enum dock_exec_outcome *o, char *err, size_t errlen);
void dock_exec_stop(struct dock_xexec *x, int rc, enum dock_exec_outcome o,
    const char *err);
int dock_exec_finish(struct dock_xexec *x, struct dock_exec_res *res,
    char *err, size_t errlen);

/*
 * POST /containers/{id}/wait?condition=not-running: blocks until the
 * container stops or `*cancel` becomes true (checked at least every
 * 200 ms). Returns 0 when it stopped, -ECANCELED when cancelled.
 */
int dock_container_wait(struct dock_engine *e, const char *id,
    const volatile bool *cancel, char *err, size_t errlen);

#endif /* DOCK_API_H */
