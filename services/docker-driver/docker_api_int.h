/*
 * docker_api_int.h - private helpers shared by the docker_*.c files that
 * implement docker_api.h: the engine handle, one-shot HTTP requests over
 * libcurl, the hijacked exec stream, and small utilities.
 */
#ifndef DOCK_API_INT_H
#define DOCK_API_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "docker_api.h"
#include "msc_principal.h"
#include "msc_time.h"

#define DOCK_API_MIN_MINOR	41	/* oldest API we accept: 1.41 */
#define DOCK_API_MAX_MINOR	47	/* newest API we speak: 1.47 */
#define DOCK_CTL_TIMEOUT_MS	30000	/* exec create/inspect and the like */
#define DOCK_PATH_MAX		2048	/* request path incl. query */
#define DOCK_BODY_MAX		(32u << 20) /* largest buffered reply body */

struct dock_engine {
	char		*name;		/* "docker" or "podman" */
	char		*sock_path;	/* unix socket, or NULL for tcp */
	char		*base_url;	/* "http://docker" or "http://h:p" */
	pthread_mutex_t	 lock;		/* guards api_minor */
	int		 api_minor;	/* 0 until negotiated */
};

/* A growable byte buffer that refuses to pass `max` bytes. */
struct dock_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
	size_t	 max;
};

int	dock_buf_append(struct dock_buf *b, const void *data, size_t n);
/* Makes b->p a NUL-terminated string (allocating when empty). */
int	dock_buf_finish(struct dock_buf *b);
void	dock_buf_fini(struct dock_buf *b);

/*
 * One request. `path` starts with '/' and carries the query; it is
 * prefixed with /v1.NN unless `unversioned`. With a `sink`, the reply body
 * of a 2xx answer is streamed to it (a non-zero return aborts the transfer
 * and becomes the call's result); otherwise it is buffered in res->body.
 * With `headers_done`, the engine answered a stream's request (2xx) and its
 * body is still to come.
 */
struct dock_http_req {
	const char		*method;
	const char		*path;
	bool			 unversioned;
	const char		*body;		/* NULL, JSON or content_type */
	size_t			 body_len;	/* 0: strlen(body) */
	const char		*content_type;	/* NULL: application/json */
	int			 timeout_ms;	/* <= 0: no limit */
	int			(*sink)(const char *, size_t, void *);
	void			*sink_arg;
	/* Called with sink_arg once a 2xx answer's headers are in. */
	void			(*headers_done)(void *);
	const volatile bool	*cancel;	/* polled every 100 ms */
	char			 api_version[16]; /* out: Api-Version header */
};

struct dock_http_res {
	long		status;
	struct dock_buf	body;
};

/*
 * Performs the request. Returns 0 when an HTTP answer arrived (whatever
 * its status) or a negative errno for transport failures, with a message.
 */
int	dock_http(struct dock_engine *e, struct dock_http_req *req,
	    struct dock_http_res *res, char *err, size_t errlen);
void	dock_http_res_fini(struct dock_http_res *res);

/*
 * Maps a non-2xx status to a negative errno (404 -ENOENT, 409
 * `conflict`, else -EIO) and writes the engine's message to err.
 */
int	dock_http_status_err(const struct dock_http_res *res, int conflict,
	    const char *what, char *err, size_t errlen);

/* Extracts {"message"} from a JSON error body into buf. */
void	dock_json_message(const char *body, size_t len, char *buf,
	    size_t buflen);

/*
 * Shared by the docker_api*.c files: one request with an optional body
 * (dock_simple); a path from fmt with one escaped argument and a tail,
 * "empty container id" or "name too long" otherwise (dock_path); a reply
 * body parsed as JSON into *outp (dock_json_reply, -EPROTO if not); a
 * GET of path whose 200 reply is that JSON, else the status's error
 * naming `what` (dock_get_json).
 */
int	dock_simple(struct dock_engine *e, const char *method,
	    const char *path, const char *body, int timeout_ms,
	    struct dock_http_res *res, char *err, size_t errlen);
int	dock_path(char *path, size_t len, const char *fmt, const char *arg,
	    const char *tail, char *err, size_t errlen);
int	dock_json_reply(struct dock_http_res *res, json_t **outp, char *err,
	    size_t errlen);
int	dock_get_json(struct dock_engine *e, const char *path,
	    const char *what, int timeout_ms, json_t **outp, char *err,
	    size_t errlen);

/* Negotiates the API version when not done yet; returns the minor. */
int	dock_negotiate(struct dock_engine *e, int timeout_ms, char *err,
	    size_t errlen);

/* Percent-encodes s into out; -ENAMETOOLONG when it does not fit. */
int	dock_escape(const char *s, char *out, size_t outlen);

void	dock_seterr(char *err, size_t errlen, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	dock_sleep_ms(int ms);

/* The hijacked exec stream (docker_stream.c). */
struct dock_stream {
	const void		*in;
	size_t			 in_len;
	bool			 has_stdin;
	int64_t			 deadline;	/* msc_now_ms() clock */
	size_t			 limit;		/* stdout+stderr bytes */
	struct dock_buf		 out;
	struct dock_buf		 err;
	struct dock_buf		 syserr;	/* stream type 3 text */
	enum dock_exec_outcome	 outcome;	/* EXITED means EOF seen */
	int			 cancel_fd;	/* readable: cancel; -1 none */
	bool			 live;		/* report output */
	/* Set: output reported here instead (live or not). */
	void			(*on_output)(void *arg, const void *p,
				    size_t n);
	void			*out_arg;
	/* Set: stdout and stderr are charged to it as they come, by
	 * principal (docker_fastexec.h); a charge refused ends the stream
	 * with -ENOBUFS and budget_err. */
	struct dock_fx_budget	*budget;
	char			 principal[MSC_PRINCIPAL_TAG_LEN + 1];
	struct dock_fx_charge	 charge;
	char			 budget_err[512];
};

/*
 * POST /exec/{id}/start on a raw connection: writes stdin after the reply
 * headers, half-closes, and demultiplexes frames into s->out/err until EOF,
 * the deadline or the output limit. Returns 0 (see s->outcome) or a
 * negative errno (-ENOENT, -EBUSY, -ECONNREFUSED, -EIO, -EPROTO, -ENOBUFS).
 */
int	dock_stream_run(struct dock_engine *e, const char *exec_id,
	    struct dock_stream *s, char *err, size_t errlen);

/*
 * dock_stream_run in steps. dock_stream_begin connects and reads the
 * reply headers (blocking; s->deadline and s->cancel_fd bound it): 0 with
 * *xp, the stream to go on with; 1 when it already ended (s->outcome:
 * TIMEOUT, CANCELLED or LIMIT); or a negative errno as dock_stream_run.
 * Then, until it ends: poll dock_stream_fd for dock_stream_events and
 * hand what came to dock_stream_step: 0 to go on, 1 when it ended
 * (s->outcome EXITED at EOF, or LIMIT), or a negative errno with err set.
 * The caller enforces s->deadline and s->cancel_fd meanwhile, or
 * dock_stream_wait does, blocking: 0 with *revents, -ETIMEDOUT,
 * -ECANCELED or -EIO.
 * dock_stream_close frees x (accepts NULL); s keeps the output. s is
 * borrowed until then; x may move between threads, one at a time.
 */
struct dock_xstream;
int	dock_stream_begin(struct dock_engine *e, const char *exec_id,
	    struct dock_stream *s, struct dock_xstream **xp, char *err,
	    size_t errlen);
int	dock_stream_fd(const struct dock_xstream *x);
short	dock_stream_events(const struct dock_xstream *x);
int	dock_stream_wait(struct dock_xstream *x, short *revents);
int	dock_stream_step(struct dock_xstream *x, short revents, char *err,
	    size_t errlen);
void	dock_stream_close(struct dock_xstream *x);

#endif /* DOCK_API_INT_H */
