/*
 * msc_driver_live.c - the registry of a driver's keyed commands, their
 * cancel eventfds and output tails; see msc_driver_live.h.
 */
#include "msc_driver_live.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "driver.pb-c.h"
#include "msc_map.h"
#include "msc_rpc.h"
#include "msc_slug.h"

#define LIVE_KEY_MAX 64

struct msc_live {
	pthread_mutex_t mu;             /* all below */
	char name[MSC_SLUG_MAX + LIVE_KEY_MAX + 2];   /* computer \x1f key */
	bool cancelled;
	bool running;
	int efd;                        /* while running; -1 otherwise */
	uint64_t bytes;
	char tail[MSC_LIVE_TAIL];       /* a ring: the last bytes */
	size_t tail_off;                /* where the next byte goes */
};

struct msc_live_table {
	pthread_mutex_t mu;             /* the map; held while using an entry */
	struct msc_map *live;           /* name -> struct msc_live */
};

static __thread struct msc_live *current;

static int
live_name(const char *computer_id, const char *key, char *out, size_t len)
{
	int n;

	if (strlen(key) > LIVE_KEY_MAX)
		return -EINVAL;
	n = snprintf(out, len, "%s\x1f%s", computer_id, key);
	return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

int
msc_live_table_new(struct msc_live_table **tp)
{
	struct msc_live_table *t = calloc(1, sizeof(*t));

	if (t == NULL || msc_map_new(&t->live) != 0) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->mu, NULL);
	*tp = t;
	return 0;
}

void
msc_live_table_free(struct msc_live_table *t)
{
	if (t == NULL)
		return;
	msc_map_free(t->live);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

int
msc_live_add(struct msc_live_table *t, const char *computer_id,
    const char *key, struct msc_live **lp)
{
	struct msc_live *l;
	int rv;

	*lp = NULL;
	if (key[0] == '\0')
		return 0;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return -ENOMEM;
	if (live_name(computer_id, key, l->name, sizeof(l->name)) != 0) {
		free(l);
		return -EINVAL;
	}
	pthread_mutex_init(&l->mu, NULL);
	l->efd = -1;
	pthread_mutex_lock(&t->mu);
	if (msc_map_get(t->live, l->name) != NULL)
		rv = -EEXIST;
	else
		rv = msc_map_put(t->live, l->name, l);
	pthread_mutex_unlock(&t->mu);
	if (rv != 0) {
		pthread_mutex_destroy(&l->mu);
		free(l);
		return rv;
	}
	*lp = l;
	return 0;
}

bool
msc_live_add_call(struct msc_live_table *t, struct msc_call *call,
    const Msc__V1__ExecRequest *r, struct msc_live **lp)
{
	int rv = msc_live_add(t, r->computer_id, r->cancel_key, lp);

	if (rv != 0)
		msc_call_fail(call, rv == -ENOMEM
			? MSC__V1__CODE__RESOURCE_EXHAUSTED
			: MSC__V1__CODE__INVALID_ARGUMENT,
		    "Driver/Exec refused: cancel_key %s", rv == -EEXIST
			? "names a command in flight" : rv == -ENOMEM
			? "cannot be kept: out of memory" : "is invalid");
	return rv == 0;
}

int
msc_live_run(struct msc_live *l, int (*exec)(void *be,
    const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *out, char *err,
    size_t errlen), void *be, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen)
{
	int rv;

	if (!msc_live_begin(l)) {
		snprintf(err, errlen, "cancelled before it started");
		return -ECANCELED;
	}
	rv = exec(be, req, out, err, errlen);
	msc_live_finish(l);
	return rv;
}

void
msc_live_end(struct msc_live_table *t, struct msc_live *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&t->mu);
	(void)msc_map_del(t->live, l->name);
	pthread_mutex_unlock(&t->mu);
	/* Nothing reaches l now: Cancel and Progress hold t->mu. */
	if (l->efd >= 0)
		close(l->efd);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

bool
msc_live_begin(struct msc_live *l)
{
	bool go;

	if (l == NULL)
		return true;
	pthread_mutex_lock(&l->mu);
	go = !l->cancelled;
	if (go) {
		l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		l->running = true;
	}
	pthread_mutex_unlock(&l->mu);
	if (go)
		current = l;
	return go;
}

void
msc_live_detach(void)
{
	current = NULL;
}

int
msc_live_fd(const struct msc_live *l)
{
	/* Set before the command starts and kept until it is freed. */
	return l != NULL ? l->efd : -1;
}

void
msc_live_finish(struct msc_live *l)
{
	current = NULL;
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->running = false;
	pthread_mutex_unlock(&l->mu);
}

/* The entry named (computer_id, key) with t->mu held, or NULL. */
static struct msc_live *
live_find_locked(struct msc_live_table *t, const char *computer_id,
    const char *key)
{
	char name[MSC_SLUG_MAX + LIVE_KEY_MAX + 2];

	if (key[0] == '\0' ||
	    live_name(computer_id, key, name, sizeof(name)) != 0)
		return NULL;
	return msc_map_get(t->live, name);
}

int
msc_live_cancel(struct msc_live_table *t, const char *computer_id,
    const char *key)
{
	struct msc_live *l;
	uint64_t one = 1;
	int rv = 0;

	pthread_mutex_lock(&t->mu);
	if ((l = live_find_locked(t, computer_id, key)) == NULL) {
		pthread_mutex_unlock(&t->mu);
		return -ENOENT;
	}
	pthread_mutex_lock(&l->mu);
	l->cancelled = true;
	/* Nonblocking; it fails only when signalled many times already. */
	if (l->efd >= 0 && write(l->efd, &one, sizeof(one)) < 0 &&
	    errno != EAGAIN)
		rv = -errno;
	pthread_mutex_unlock(&l->mu);
	pthread_mutex_unlock(&t->mu);
	return rv;
}

static void
cancel_one(void *arg, const char *name, void *value)
{
	struct msc_live *l = value;
	uint64_t one = 1;

	(void)arg;
	(void)name;
	pthread_mutex_lock(&l->mu);
	l->cancelled = true;
	/* Nonblocking; fails only when signalled many times already. */
	if (l->efd >= 0)
		(void)!write(l->efd, &one, sizeof(one));
	pthread_mutex_unlock(&l->mu);
}

void
msc_live_cancel_all(struct msc_live_table *t)
{
	pthread_mutex_lock(&t->mu);
	msc_map_each(t->live, cancel_one, NULL);
	pthread_mutex_unlock(&t->mu);
}

int
msc_live_peek(struct msc_live_table *t, const char *computer_id,
    const char *key, uint64_t *bytes, bool *running, char *tail,
    size_t *tail_len)
{
	struct msc_live *l;
	size_t n, first;

	pthread_mutex_lock(&t->mu);
	if ((l = live_find_locked(t, computer_id, key)) == NULL) {
		pthread_mutex_unlock(&t->mu);
		return -ENOENT;
	}
	pthread_mutex_lock(&l->mu);
	*bytes = l->bytes;
	*running = l->running;
	n = l->bytes < MSC_LIVE_TAIL ? (size_t)l->bytes : MSC_LIVE_TAIL;
	/* The ring's oldest kept byte is n bytes before tail_off. */
	first = (l->tail_off + MSC_LIVE_TAIL - n) % MSC_LIVE_TAIL;
	for (size_t i = 0; i < n; i++)
		tail[i] = l->tail[(first + i) % MSC_LIVE_TAIL];
	*tail_len = n;
	pthread_mutex_unlock(&l->mu);
	pthread_mutex_unlock(&t->mu);
	return 0;
}

int
msc_driver_cancel_fd(void)
{
	return current != NULL ? current->efd : -1;
}

bool
msc_driver_cancelled(void)
{
	bool c;

	if (current == NULL)
		return false;
	pthread_mutex_lock(&current->mu);
	c = current->cancelled;
	pthread_mutex_unlock(&current->mu);
	return c;
}

void
msc_driver_output(const void *p, size_t n)
{
	msc_live_output(current, p, n);
}

void
msc_live_output(struct msc_live *l, const void *p, size_t n)
{
	const char *b = p;

	if (l == NULL || n == 0)
		return;
	if (n > MSC_LIVE_TAIL) {
		b += n - MSC_LIVE_TAIL;
		pthread_mutex_lock(&l->mu);
		l->bytes += n - MSC_LIVE_TAIL;
		pthread_mutex_unlock(&l->mu);
		n = MSC_LIVE_TAIL;
	}
	pthread_mutex_lock(&l->mu);
	for (size_t i = 0; i < n; i++) {
		l->tail[l->tail_off] = b[i];
		l->tail_off = (l->tail_off + 1) % MSC_LIVE_TAIL;
	}
	l->bytes += n;
	pthread_mutex_unlock(&l->mu);
}

void
msc_live_h_cancel(struct msc_live_table *t, struct msc_call *call,
    const ProtobufCMessage *req)
{
	const Msc__V1__ExecRef *r = (const Msc__V1__ExecRef *)req;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	int rv = msc_live_cancel(t, r->computer_id, r->cancel_key);

	if (rv == -ENOENT)
		msc_call_fail(call, MSC__V1__CODE__NOT_FOUND, "no such command "
		    "runs on computer '%s'", r->computer_id);
	else if (rv != 0)
		msc_call_fail(call, MSC__V1__CODE__INTERNAL, "cancel: %s",
		    strerror(-rv));
	else
		msc_call_reply(call, &e.base);
}

void
msc_live_h_progress(struct msc_live_table *t, struct msc_call *call,
    const ProtobufCMessage *req)
{
	const Msc__V1__ExecRef *r = (const Msc__V1__ExecRef *)req;
	Msc__V1__ExecProgress p = MSC__V1__EXEC_PROGRESS__INIT;
	char tail[MSC_LIVE_TAIL];
	size_t n = 0;
	bool running = false;

	if (msc_live_peek(t, r->computer_id, r->cancel_key, &p.output_bytes,
	    &running, tail, &n) != 0) {
		msc_call_fail(call, MSC__V1__CODE__NOT_FOUND, "no such command "
		    "runs on computer '%s'", r->computer_id);
		return;
	}
	p.running = running;
	p.tail.data = (uint8_t *)tail;
	p.tail.len = n;
	msc_call_reply(call, &p.base);
}
