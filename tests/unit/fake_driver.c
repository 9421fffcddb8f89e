/* fake_driver.c - see fake_driver.h. */
#include "fake_driver.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.pb-c.h"
#include "msc_rpc.h"

#define FD_MAX_COMPUTERS 1024  /* bench/placement_bench.c: 1,000 over 3 */
#define FD_MAX_LOG 8192
#define FD_MAX_HELD 256
#define FD_ID_LEN 64

struct fd_computer {
	char id[FD_ID_LEN];
	bool temporary;
	char state[16];
};

struct fd_held {
	struct msc_call *call;
	const ProtobufCMessage *req;
};

struct fake_driver {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char url[128];
	char id[FD_ID_LEN];
	struct msc_server *srv;
	struct fd_computer computers[FD_MAX_COMPUTERS];
	size_t n;
	int calls[FD_N_METHODS];
	struct {
		enum fake_method m;
		char id[FD_ID_LEN];
	} log[FD_MAX_LOG];
	size_t n_log;
	int fail_n[FD_N_METHODS];
	Msc__V1__Code fail_code[FD_N_METHODS];
	bool hold[FD_N_METHODS];
	struct fd_held held[FD_N_METHODS][FD_MAX_HELD];
	int n_held[FD_N_METHODS];
	char last_owner[FD_ID_LEN];
	int last_left_ms[FD_N_METHODS];  /* the last call's time left */
};

static struct fd_computer *
find(struct fake_driver *fd, const char *id)
{
	for (size_t i = 0; i < fd->n; i++)
		if (strcmp(fd->computers[i].id, id) == 0)
			return &fd->computers[i];
	return NULL;
}

static void
drop(struct fake_driver *fd, struct fd_computer *c)
{
	*c = fd->computers[--fd->n];
}

static struct fd_computer *
add_locked(struct fake_driver *fd, const char *id, bool temporary)
{
	struct fd_computer *c;

	if (fd->n == FD_MAX_COMPUTERS)
		return NULL;
	c = &fd->computers[fd->n++];
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->temporary = temporary;
	snprintf(c->state, sizeof(c->state), "running");
	return c;
}

/* Fills out from c (strings borrowed from c and fd). */
static void
describe(struct fake_driver *fd, struct fd_computer *c, Msc__V1__Computer *out)
{
	out->computer_id = c->id;
	out->sandbox_id = c->id;
	out->temporary = c->temporary;
	out->image = "fake:latest";
	out->state = c->state;
	out->backend = "fake";
	out->driver = fd->id;
}

static const char *
req_id(enum fake_method m, const ProtobufCMessage *req)
{
	switch (m) {
	case FD_CREATE:
		return ((const Msc__V1__CreateRequest *)req)->computer_id;
	case FD_EXEC:
		return ((const Msc__V1__ExecRequest *)req)->computer_id;
	case FD_LIST:
		return "";
	default:
		return ((const Msc__V1__ComputerRef *)req)->computer_id;
	}
}

/* Answers one call as the driver does (lock held). */
static void
serve_locked(struct fake_driver *fd, enum fake_method m, struct msc_call *call,
    const ProtobufCMessage *req)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	const char *id = req_id(m, req);
	struct fd_computer *fc = m == FD_LIST ? NULL : find(fd, id);

	switch (m) {
	case FD_CREATE:
		if (fc != NULL) {
			msc_call_fail(call, MSC__V1__CODE__ALREADY_EXISTS,
			    "computer '%s' exists", id);
			return;
		}
		fc = add_locked(fd, id,
		    ((const Msc__V1__CreateRequest *)req)->temporary);
		if (fc == NULL) {
			msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    "fake driver full");
			return;
		}
		describe(fd, fc, &c);
		msc_call_reply(call, &c.base);
		return;
	case FD_ATTACH:
	case FD_RESTART:
	case FD_RESET:
		if (fc == NULL) {
			msc_call_fail(call, MSC__V1__CODE__NOT_FOUND,
			    "no computer '%s'", id);
			return;
		}
		snprintf(fc->state, sizeof(fc->state), "running");
		describe(fd, fc, &c);
		msc_call_reply(call, &c.base);
		return;
	case FD_EXEC: {
		Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;
		char out[128];

		snprintf(fd->last_owner, sizeof(fd->last_owner), "%s",
		    ((const Msc__V1__ExecRequest *)req)->owner);
		if (fc == NULL) {
			msc_call_fail(call, MSC__V1__CODE__ABORTED,
			    "computer '%s' is gone", id);
			return;
		}
		snprintf(out, sizeof(out), "ran on %s/%s\n", fd->id, id);
		res.stdout.data = (uint8_t *)out;
		res.stdout.len = strlen(out);
		msc_call_reply(call, &res.base);
		return;
	}
	case FD_STOP:
		if (fc != NULL && fc->temporary)
			drop(fd, fc);
		else if (fc != NULL)
			snprintf(fc->state, sizeof(fc->state), "exited");
		msc_call_reply(call, &e.base);
		return;
	case FD_DELETE:
		if (fc == NULL) {
			msc_call_fail(call, MSC__V1__CODE__NOT_FOUND,
			    "no computer '%s'", id);
			return;
		}
		drop(fd, fc);
		msc_call_reply(call, &e.base);
		return;
	case FD_LIST: {
		Msc__V1__ComputerList l = MSC__V1__COMPUTER_LIST__INIT;
		Msc__V1__Computer *items = calloc(fd->n + 1, sizeof(*items));
		Msc__V1__Computer **ptrs = calloc(fd->n + 1, sizeof(*ptrs));

		if (items == NULL || ptrs == NULL) {
			free(items);
			free(ptrs);
			msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    "oom");
			return;
		}
		for (size_t i = 0; i < fd->n; i++) {
			items[i] = (Msc__V1__Computer)MSC__V1__COMPUTER__INIT;
			describe(fd, &fd->computers[i], &items[i]);
			ptrs[i] = &items[i];
		}
		l.computers = ptrs;
		l.n_computers = fd->n;
		msc_call_reply(call, &l.base);
		free(items);
		free(ptrs);
		return;
	}
	default:
		msc_call_fail(call, MSC__V1__CODE__UNIMPLEMENTED, "no");
	}
}

static void
handle(struct fake_driver *fd, enum fake_method m, struct msc_call *call,
    const ProtobufCMessage *req)
{
	pthread_mutex_lock(&fd->mu);
	fd->calls[m]++;
	fd->last_left_ms[m] = msc_call_remaining_ms(call);
	if (fd->n_log < FD_MAX_LOG) {
		fd->log[fd->n_log].m = m;
		snprintf(fd->log[fd->n_log].id, FD_ID_LEN, "%s", req_id(m, req));
		fd->n_log++;
	}
	pthread_cond_broadcast(&fd->cv);
	if (fd->fail_n[m] > 0) {
		fd->fail_n[m]--;
		pthread_mutex_unlock(&fd->mu);
		msc_call_fail(call, fd->fail_code[m], "fake failure");
		return;
	}
	if (fd->hold[m] && fd->n_held[m] < FD_MAX_HELD) {
		fd->held[m][fd->n_held[m]].call = call;
		fd->held[m][fd->n_held[m]].req = req;
		fd->n_held[m]++;
		pthread_cond_broadcast(&fd->cv);
		pthread_mutex_unlock(&fd->mu);
		return;
	}
	serve_locked(fd, m, call, req);
	pthread_mutex_unlock(&fd->mu);
}

#define HANDLER(name, m)                                                       \
	static void name(void *state, struct msc_call *call,                   \
	    const ProtobufCMessage *req)                                        \
	{                                                                      \
		handle(state, m, call, req);                                   \
	}
HANDLER(h_create, FD_CREATE)
HANDLER(h_attach, FD_ATTACH)
HANDLER(h_exec, FD_EXEC)
HANDLER(h_stop, FD_STOP)
HANDLER(h_delete, FD_DELETE)
HANDLER(h_restart, FD_RESTART)
HANDLER(h_reset, FD_RESET)
HANDLER(h_list, FD_LIST)

static const struct msc_method methods[] = {
	{ "Create", h_create },
	{ "Attach", h_attach },
	{ "Exec", h_exec },
	{ "Stop", h_stop },
	{ "Delete", h_delete },
	{ "Restart", h_restart },
	{ "Reset", h_reset },
	{ "List", h_list },
	{ NULL, NULL },
};

int
fake_driver_start(const char *url, const char *id, struct fake_driver **fdp)
{
	struct fake_driver *fd = calloc(1, sizeof(*fd));
	int rv;

	if (fd == NULL)
		return -ENOMEM;
	pthread_mutex_init(&fd->mu, NULL);
	pthread_cond_init(&fd->cv, NULL);
	snprintf(fd->url, sizeof(fd->url), "%s", url);
	snprintf(fd->id, sizeof(fd->id), "%s", id);
	if ((rv = fake_driver_up(fd)) != 0) {
		fake_driver_free(fd);
		return rv;
	}
	*fdp = fd;
	return 0;
}

int
fake_driver_up(struct fake_driver *fd)
{
	return msc_server_start(fd->url, &msc__v1__driver__descriptor, methods,
	    fd, 1024, &fd->srv);
}

void
fake_driver_let_go_all(struct fake_driver *fd)
{
	for (int m = 0; m < FD_N_METHODS; m++)
		fake_driver_let_go(fd, (enum fake_method)m);
}

void
fake_driver_down(struct fake_driver *fd)
{
	fake_driver_let_go_all(fd);
	msc_server_stop(fd->srv);
	fd->srv = NULL;
}

void
fake_driver_free(struct fake_driver *fd)
{
	if (fd == NULL)
		return;
	fake_driver_down(fd);
	pthread_mutex_destroy(&fd->mu);
	pthread_cond_destroy(&fd->cv);
	free(fd);
}

void
fake_driver_add(struct fake_driver *fd, const char *id, bool temporary)
{
	pthread_mutex_lock(&fd->mu);
	if (find(fd, id) == NULL)
		(void)add_locked(fd, id, temporary);
	pthread_mutex_unlock(&fd->mu);
}

bool
fake_driver_has(struct fake_driver *fd, const char *id)
{
	bool has;

	pthread_mutex_lock(&fd->mu);
	has = find(fd, id) != NULL;
	pthread_mutex_unlock(&fd->mu);
	return has;
}

size_t
fake_driver_n_computers(struct fake_driver *fd)
{
	size_t n;

	pthread_mutex_lock(&fd->mu);
	n = fd->n;
	pthread_mutex_unlock(&fd->mu);
	return n;
}

int
fake_driver_calls(struct fake_driver *fd, enum fake_method m)
{
	int n;

	pthread_mutex_lock(&fd->mu);
	n = fd->calls[m];
	pthread_mutex_unlock(&fd->mu);
	return n;
}

int
fake_driver_calls_for(struct fake_driver *fd, enum fake_method m,
    const char *id)
{
	int n = 0;

	pthread_mutex_lock(&fd->mu);
	for (size_t i = 0; i < fd->n_log; i++)
		if (fd->log[i].m == m && strcmp(fd->log[i].id, id) == 0)
			n++;
	pthread_mutex_unlock(&fd->mu);
	return n;
}

void
fake_driver_last_owner(struct fake_driver *fd, char *buf, size_t len)
{
	pthread_mutex_lock(&fd->mu);
	snprintf(buf, len, "%s", fd->last_owner);
	pthread_mutex_unlock(&fd->mu);
}

/* Waits (lock held) until *v >= n. */
static bool
wait_locked(struct fake_driver *fd, const int *v, int n, int timeout_ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (*v < n)
		if (pthread_cond_timedwait(&fd->cv, &fd->mu, &until) != 0)
			return *v >= n;
	return true;
}

bool
fake_driver_wait_calls(struct fake_driver *fd, enum fake_method m, int n,
    int timeout_ms)
{
	bool ok;

	pthread_mutex_lock(&fd->mu);
	ok = wait_locked(fd, &fd->calls[m], n, timeout_ms);
	pthread_mutex_unlock(&fd->mu);
	return ok;
}

void
fake_driver_fail_next(struct fake_driver *fd, enum fake_method m, int n,
    Msc__V1__Code code)
{
	pthread_mutex_lock(&fd->mu);
	fd->fail_n[m] = n;
	fd->fail_code[m] = code;
	pthread_mutex_unlock(&fd->mu);
}

void
fake_driver_hold(struct fake_driver *fd, enum fake_method m)
{
	pthread_mutex_lock(&fd->mu);
	fd->hold[m] = true;
	pthread_mutex_unlock(&fd->mu);
}

int
fake_driver_held(struct fake_driver *fd, enum fake_method m)
{
	int n;

	pthread_mutex_lock(&fd->mu);
	n = fd->n_held[m];
	pthread_mutex_unlock(&fd->mu);
	return n;
}

bool
fake_driver_wait_held(struct fake_driver *fd, enum fake_method m, int n,
    int timeout_ms)
{
	bool ok;

	pthread_mutex_lock(&fd->mu);
	ok = wait_locked(fd, &fd->n_held[m], n, timeout_ms);
	pthread_mutex_unlock(&fd->mu);
	return ok;
}

void
fake_driver_let_go(struct fake_driver *fd, enum fake_method m)
{
	pthread_mutex_lock(&fd->mu);
	fd->hold[m] = false;
	for (int i = 0; i < fd->n_held[m]; i++)
		serve_locked(fd, m, fd->held[m][i].call, fd->held[m][i].req);
	fd->n_held[m] = 0;
	pthread_mutex_unlock(&fd->mu);
}

void
fake_driver_let_go_fail(struct fake_driver *fd, enum fake_method m,
    Msc__V1__Code code)
{
	pthread_mutex_lock(&fd->mu);
	fd->hold[m] = false;
	for (int i = 0; i < fd->n_held[m]; i++)
		msc_call_fail(fd->held[m][i].call, code, "fake failure");
	fd->n_held[m] = 0;
	pthread_mutex_unlock(&fd->mu);
}

int
fake_driver_last_left_ms(struct fake_driver *fd, enum fake_method m)
{
	int ms;

	pthread_mutex_lock(&fd->mu);
	ms = fd->last_left_ms[m];
	pthread_mutex_unlock(&fd->mu);
	return ms;
}
