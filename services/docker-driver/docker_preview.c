/*
 * docker_preview.c - the preview URLs' table (issue 30): which
 * capability opens which port of which computer.
 *
 * Kept in memory (one list under a mutex, at most DOCK_PREVIEW_MAX rows)
 * and in one host file per computer, BASE/preview-<driver id>/<id>, a
 * line "PORT CAPABILITY CONTAINER-ID" per exposed port (written whole,
 * then renamed over the old one), so that a permanent computer's URLs
 * outlive the driver: the files are read again at start. Each row names
 * the engine's container Id of its computer: a row whose computer is
 * gone, or is another container now (deleted behind our back, then made
 * again by the same name), is forgotten at its first request; a
 * computer's creation forgets the rows of its name. The computer's address is asked of
 * the engine (never of the computer) and kept a second, so that a
 * restarted computer's new address is found.
 */
#include "docker_driver_int.h"
#include "docker_preview.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_random.h"
#include "msc_slug.h"
#include "msc_time.h"

#define DOCK_CTR_ID_MAX 64

/* How long an address asked of the engine is used again. */
#define ADDR_KEEP_MS 1000

struct row {
	TAILQ_ENTRY(row) link;
	char cap[DOCK_PREVIEW_CAP_LEN + 1];
	char id[MSC_SLUG_MAX + 1];
	uint16_t port;
	char ctr[DOCK_CTR_ID_MAX + 1];  /* the engine's container Id */
	char ip[64];            /* "" until asked */
	uint64_t ip_at;         /* when asked (msc_now_ms) */
	unsigned moved;         /* dock_preview_moved calls: an answer asked
				 * before one is not kept */
};

TAILQ_HEAD(rows, row);

struct dock_preview {
	struct dock_driver *d;
	pthread_mutex_t mu;     /* guards rows, n, loop, listen_port */
	struct rows rows;
	size_t n;
	char dir[600];          /* the files' folder */
	const struct dock_preview_listener *listener;
	struct dock_proxy_loop *loop;   /* NULL until started */
	uint16_t listen_port;
};

/* Whether two capabilities are the same, in a time that does not say
 * how many of their first characters are (a capability is a secret
 * guessed over the network otherwise, character by character). */
static bool
cap_equal(const char *a, const char *b)
{
	unsigned char diff = 0;

	for (size_t i = 0; i < DOCK_PREVIEW_CAP_LEN; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

static struct row *
find_cap_locked(struct dock_preview *p, const char *cap)
{
	struct row *r;

	if (strnlen(cap, DOCK_PREVIEW_CAP_LEN + 1) != DOCK_PREVIEW_CAP_LEN)
		return NULL;
	TAILQ_FOREACH(r, &p->rows, link)
		if (cap_equal(r->cap, cap))
			return r;
	return NULL;
}

static struct row *
find_port_locked(struct dock_preview *p, const char *id, uint16_t port)
{
	struct row *r;

	TAILQ_FOREACH(r, &p->rows, link)
		if (r->port == port && strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

static size_t
count_locked(struct dock_preview *p, const char *id)
{
	struct row *r;
	size_t n = 0;

	TAILQ_FOREACH(r, &p->rows, link)
		n += strcmp(r->id, id) == 0;
	return n;
}

/*
 * Whether folder path is ours alone: a folder (not a link), owned by
 * this user, writable by no one else (private: nor readable). For a
 * non-root driver the base is in /tmp, where another local user could
 * have made it first to read or plant capabilities.
 */
static bool
dir_safe(const char *path, bool private)
{
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() ||
	    (st.st_mode & (private ? 077 : 022)) != 0) {
		msc_log_warn("preview: %s is not a folder of this user alone "
		    "(owner, mode): the preview URLs are not kept there", path);
		return false;
	}
	return true;
}

/* The base folder (p->dir's parent) into base. */
static void
base_of(const struct dock_preview *p, char *base, size_t len)
{
	snprintf(base, len, "%s", p->dir);
	if (strrchr(base, '/') != NULL)
		*strrchr(base, '/') = '\0';
}

/* Writes computer id's rows to its file (none: removes it). The file is
 * made anew (0600, never through a link), then renamed over the old. */
static int
save_locked(struct dock_preview *p, const char *id)
{
	char path[700], tmp[720], base[600];
	struct row *r;
	FILE *f;
	int rv = 0, fd;

	snprintf(path, sizeof(path), "%.600s/%.63s", p->dir, id);
	if (count_locked(p, id) == 0) {
		if (unlink(path) != 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	base_of(p, base, sizeof(base));
	if ((mkdir(base, 0700) != 0 && errno != EEXIST) ||
	    (mkdir(p->dir, 0700) != 0 && errno != EEXIST))
		return -errno;
	if (!dir_safe(base, false) || !dir_safe(p->dir, true))
		return -EPERM;
	snprintf(tmp, sizeof(tmp), "%.700s.tmp", path);
	(void)unlink(tmp);              /* one of a crash (the folder is ours) */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0)
		return -errno;
	if ((f = fdopen(fd, "w")) == NULL) {
		rv = -errno;
		close(fd);
		unlink(tmp);
		return rv;
	}
	TAILQ_FOREACH(r, &p->rows, link)
		if (strcmp(r->id, id) == 0 &&
		    fprintf(f, "%u %s %s\n", r->port, r->cap, r->ctr) < 0)
			rv = -EIO;
	if (fclose(f) != 0 && rv == 0)
		rv = -errno;
	if (rv == 0 && rename(tmp, path) != 0)
		rv = -errno;
	if (rv != 0)
		unlink(tmp);
	return rv;
}

static bool
cap_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return false;
	return i == DOCK_PREVIEW_CAP_LEN;
}

static bool
ctr_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return false;
	return i > 0 && i <= DOCK_CTR_ID_MAX;
}

/* The container's Id in an inspect answer, or "". */
static const char *
ctr_id(json_t *ctr)
{
	const char *s = json_string_value(json_object_get(ctr, "Id"));

	return s != NULL && ctr_valid(s) ? s : "";
}

static void
load_file(struct dock_preview *p, const char *id)
{
	char path[700], line[192], cap[64], ctr[DOCK_CTR_ID_MAX + 1];
	struct stat st;
	unsigned port;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%.600s/%.63s", p->dir, id);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
	    (f = fdopen(fd, "r")) == NULL) {
		msc_log_warn("preview: %s is not a file of this user alone: "
		    "ignored", path);
		close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL &&
	    p->n < DOCK_PREVIEW_MAX) {
		struct row *r;

		/* (A line without its container's Id, of an older version,
		 * is dropped: whose it was cannot be told.) */
		if (sscanf(line, "%u %63s %64s", &port, cap, ctr) != 3 ||
		    port < 1 || port > 65535 || !cap_valid(cap) ||
		    !ctr_valid(ctr) ||
		    find_cap_locked(p, cap) != NULL ||
		    count_locked(p, id) >= DOCK_PREVIEW_PER_COMPUTER ||
		    (r = calloc(1, sizeof(*r))) == NULL)
			continue;
		memcpy(r->cap, cap, DOCK_PREVIEW_CAP_LEN);
		snprintf(r->id, sizeof(r->id), "%.63s", id);
		r->port = (uint16_t)port;
		snprintf(r->ctr, sizeof(r->ctr), "%s", ctr);
		TAILQ_INSERT_TAIL(&p->rows, r, link);
		p->n++;
	}
	fclose(f);
	if (count_locked(p, id) == 0)
		(void)unlink(path);     /* nothing usable in it */
}

/* Starts the listener once; under mu. */
static int
listen_locked(struct dock_preview *p, char *err, size_t errlen)
{
	const struct dock_cfg *dc = dock_cfg(p->d->cfg);

	if (p->loop != NULL)
		return 0;
	return p->listener->listen(p, dc->preview_listen != NULL ?
	    dc->preview_listen : "127.0.0.1:8790",
	    dc->preview_domain != NULL ? dc->preview_domain : "localhost",
	    &p->loop, &p->listen_port, err, errlen);
}

static void forget_locked(struct dock_preview *p, const char *id,
    const char *keep_ctr);

/* At start: the rows of computers the engine no longer has are dropped
 * (their files too), so that no listener starts for them. One engine
 * call per computer with a file; an engine that does not answer keeps
 * them (forgotten at their first request then). */
static void
drop_gone(struct dock_preview *p)
{
	char id[MSC_SLUG_MAX + 1], err[256];
	struct row *r;
	json_t *ctr;

	for (;;) {
		bool asked = false;

		pthread_mutex_lock(&p->mu);
		TAILQ_FOREACH(r, &p->rows, link)
			if (r->ip_at == 0) {
				snprintf(id, sizeof(id), "%s", r->id);
				asked = true;
				break;
			}
		pthread_mutex_unlock(&p->mu);
		if (!asked)
			return;
		ctr = NULL;
		int rv = dock_find(p->d, id, &ctr, err, sizeof(err));

		pthread_mutex_lock(&p->mu);
		if (rv == -ENOENT) {
			msc_log_info("preview: computer %s is gone: its URLs "
			    "are dropped", id);
			forget_locked(p, id, NULL);
		} else {
			/* Another container by that name: not its URLs. */
			if (rv == 0)
				forget_locked(p, id, ctr_id(ctr));
			TAILQ_FOREACH(r, &p->rows, link)
				if (strcmp(r->id, id) == 0)
					r->ip_at = 1;   /* seen; no address */
		}
		pthread_mutex_unlock(&p->mu);
		json_decref(ctr);
	}
}

int
dock_preview_init(struct dock_driver *d,
    const struct dock_preview_listener *listener, struct dock_preview **pp)
{
	struct dock_preview *p = calloc(1, sizeof(*p));
	char base[512], pbase[600], err[256];
	struct dirent *e;
	DIR *dir;

	if (p == NULL)
		return -ENOMEM;
	p->d = d;
	p->listener = listener;
	pthread_mutex_init(&p->mu, NULL);
	TAILQ_INIT(&p->rows);
	if (dock_pol_base(base, sizeof(base)) != 0) {
		free(p);
		return -ENAMETOOLONG;
	}
	snprintf(p->dir, sizeof(p->dir), "%s/preview-%s", base,
	    d->cfg->driver_id != NULL && msc_slug_valid(d->cfg->driver_id) ?
	    d->cfg->driver_id : "docker");
	base_of(p, pbase, sizeof(pbase));
	/* Read only from folders nobody else could write (nor read). */
	if (access(p->dir, F_OK) == 0 && dir_safe(pbase, false) &&
	    dir_safe(p->dir, true) && (dir = opendir(p->dir)) != NULL) {
		while ((e = readdir(dir)) != NULL)
			if (msc_slug_valid(e->d_name))
				load_file(p, e->d_name);
		closedir(dir);
	}
	*pp = p;
	drop_gone(p);
	if (p->n > 0) {
		pthread_mutex_lock(&p->mu);
		if (listen_locked(p, err, sizeof(err)) != 0)
			msc_log_warn("preview URLs kept from before are not "
			    "served: %s", err);
		else
			msc_log_info("preview listener on port %u: %zu URLs "
			    "kept from before", p->listen_port, p->n);
		pthread_mutex_unlock(&p->mu);
	}
	return 0;
}

void
dock_preview_free(struct dock_preview *p)
{
	struct row *r;

	if (p == NULL)
		return;
	if (p->loop != NULL)
		p->listener->stop(p->loop);
	while ((r = TAILQ_FIRST(&p->rows)) != NULL) {
		TAILQ_REMOVE(&p->rows, r, link);
		free(r);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* The computer's address on the sandbox network, else on any. */
static int
address_of(json_t *ctr, char *ip, size_t iplen)
{
	json_t *nets = json_object_get(json_object_get(ctr, "NetworkSettings"),
	    "Networks");
	const char *a = json_string_value(json_object_get(json_object_get(nets,
	    DOCK_NET_NAME), "IPAddress"));
	const char *key;
	json_t *v;

	if (!json_is_true(json_object_get(json_object_get(ctr, "State"),
	    "Running")))
		return -ENETUNREACH;
	if (a == NULL || a[0] == '\0')
		json_object_foreach(nets, key, v) {
			a = json_string_value(json_object_get(v, "IPAddress"));
			if (a != NULL && a[0] != '\0')
				break;
		}
	if (a == NULL || a[0] == '\0' || strlen(a) >= iplen)
		return -ENETUNREACH;
	snprintf(ip, iplen, "%s", a);
	return 0;
}

static void
put_ports_locked(struct dock_preview *p, const char *id, Msc__V1__Preview *out)
{
	struct row *r;

	out->ports = calloc(DOCK_PREVIEW_PER_COMPUTER, sizeof(*out->ports));
	if (out->ports == NULL)
		return;
	TAILQ_FOREACH(r, &p->rows, link)
		if (strcmp(r->id, id) == 0 &&
		    out->n_ports < DOCK_PREVIEW_PER_COMPUTER)
			out->ports[out->n_ports++] = r->port;
}

bool
dock_preview_url_serves_hosts(const char *url)
{
	const char *h;
	size_t n;

	if (url == NULL)
		return false;
	if (strncmp(url, "tcp://", 6) == 0)
		h = url + 6;
	else if (strncmp(url, "tls+tcp://", 10) == 0)
		h = url + 10;
	else
		return false;   /* inproc://, ipc://: this host */
	n = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/");
	if ((n == 9 && strncmp(h, "localhost", 9) == 0) ||
	    (n == 5 && strncmp(h, "[::1]", 5) == 0) ||
	    strncmp(h, "127.", 4) == 0)
		return false;
	return true;    /* an address, a name, or every address (0.0.0.0) */
}

/* A domain that names this host alone: localhost, *.localhost. */
static bool
local_domain(const char *domain)
{
	size_t n = strlen(domain);

	return strcmp(domain, "localhost") == 0 || (n > 10 &&
	    strcmp(domain + n - 10, ".localhost") == 0);
}

int
dock_preview_expose(struct dock_driver *d,
    const Msc__V1__SnapshotRequest *req, Msc__V1__Preview *out, char *err,
    size_t errlen)
{
	struct dock_preview *p = d->preview;
	const char *domain = dock_cfg(d->cfg)->preview_domain != NULL ?
	    dock_cfg(d->cfg)->preview_domain : "localhost";
	uint16_t port = (uint16_t)req->port;
	char cid[DOCK_CTR_ID_MAX + 1];
	const char *mode;
	json_t *ctr = NULL;
	struct row *r;
	int rv;

	if (p == NULL) {
		snprintf(err, errlen, "preview URLs are not served here");
		return -ENOSYS;
	}
	/* The computer is ours and exists (its address is asked later):
	 * first, so a caller naming another's id learns nothing more. */
	if ((rv = dock_find(d, req->computer_id, &ctr, err, errlen)) != 0)
		return rv;
	/* The cluster layout: users are not on this driver's host, and no
	 * edge proxies to it, so a localhost URL would lead nowhere. */
	if (!req->unexpose && d->serves_hosts && local_domain(domain)) {
		json_decref(ctr);
		snprintf(err, errlen, "Preview URLs of computers on driver "
		    "'%s' would name %s, which reaches only the host a browser "
		    "runs on: this driver serves other hosts (the cluster "
		    "layout) and an edge does not proxy preview URLs. Give the "
		    "driver --preview-domain (a wildcard DNS name for its "
		    "host) and --preview-listen (an address users reach).",
		    d->cfg->driver_id != NULL ? d->cfg->driver_id : "",
		    domain);
		return -EINVAL;
	}
	mode = json_string_value(json_object_get(json_object_get(ctr,
	    "HostConfig"), "NetworkMode"));
	if (!req->unexpose && mode != NULL && strcmp(mode, "none") == 0) {
		json_decref(ctr);
		snprintf(err, errlen, "Computer '%s' has no network "
		    "(--no-network): its ports cannot be previewed.",
		    req->computer_id);
		return -EINVAL;         /* the request, for this computer */
	}
	snprintf(cid, sizeof(cid), "%s", ctr_id(ctr));
	json_decref(ctr);
	if (cid[0] == '\0' && !req->unexpose) {
		snprintf(err, errlen, "The engine did not name computer '%s''s "
		    "container.", req->computer_id);
		return -EPROTO;
	}
	pthread_mutex_lock(&p->mu);
	/* Rows of an earlier container by this name (deleted meanwhile,
	 * or behind our back) are not this one's: forgotten. */
	if (cid[0] != '\0')
		forget_locked(p, req->computer_id, cid);
	r = find_port_locked(p, req->computer_id, port);
	if (req->unexpose) {
		if (r == NULL) {
			pthread_mutex_unlock(&p->mu);
			snprintf(err, errlen, "Port %u of computer '%s' is not "
			    "exposed.", port, req->computer_id);
			return -ENOENT;
		}
		TAILQ_REMOVE(&p->rows, r, link);
		p->n--;
		free(r);
		if ((rv = save_locked(p, req->computer_id)) != 0)
			msc_log_warn("preview: cannot update %s/%s: %s",
			    p->dir, req->computer_id, strerror(-rv));
		goto answer;
	}
	if ((rv = listen_locked(p, err, errlen)) != 0) {
		pthread_mutex_unlock(&p->mu);
		return -EADDRNOTAVAIL;
	}
	if (r == NULL) {
		if (count_locked(p, req->computer_id) >=
		    DOCK_PREVIEW_PER_COMPUTER || p->n >= DOCK_PREVIEW_MAX) {
			pthread_mutex_unlock(&p->mu);
			snprintf(err, errlen, "A computer exposes at most %d "
			    "ports at once (and this server %d): unexpose one "
			    "first.", DOCK_PREVIEW_PER_COMPUTER,
			    DOCK_PREVIEW_MAX);
			return -EDQUOT;
		}
		if ((r = calloc(1, sizeof(*r))) == NULL) {
			pthread_mutex_unlock(&p->mu);
			return -ENOMEM;
		}
		msc_random_hex(r->cap, DOCK_PREVIEW_CAP_LEN / 2);
		snprintf(r->id, sizeof(r->id), "%s", req->computer_id);
		snprintf(r->ctr, sizeof(r->ctr), "%s", cid);
		r->port = port;
		TAILQ_INSERT_TAIL(&p->rows, r, link);
		p->n++;
		if ((rv = save_locked(p, req->computer_id)) != 0)
			msc_log_warn("preview: cannot save %s/%s (the URL "
			    "will not outlive this server): %s", p->dir,
			    req->computer_id, strerror(-rv));
	}
	if (asprintf(&out->url, "http://%s.%s:%u/", r->cap, domain,
	    p->listen_port) < 0)
		out->url = NULL;
answer:
	out->port = port;
	out->computer_id = strdup(req->computer_id);
	put_ports_locked(p, req->computer_id, out);
	pthread_mutex_unlock(&p->mu);
	if ((!req->unexpose && out->url == NULL) || out->computer_id == NULL) {
		msc_preview_fini(out);
		return -ENOMEM;
	}
	if (out->url == NULL)
		out->url = strdup("");
	return out->url == NULL ? -ENOMEM : 0;
}

bool
dock_preview_known(struct dock_preview *p, const char *cap)
{
	bool known;

	pthread_mutex_lock(&p->mu);
	known = find_cap_locked(p, cap) != NULL;
	pthread_mutex_unlock(&p->mu);
	return known;
}

/* Forgets every row of computer id (gone), but those of container
 * keep_ctr when not NULL (the one by that name now). */
static void
forget_locked(struct dock_preview *p, const char *id, const char *keep_ctr)
{
	struct row *r, *next;
	bool any = false;

	for (r = TAILQ_FIRST(&p->rows); r != NULL; r = next) {
		next = TAILQ_NEXT(r, link);
		if (strcmp(r->id, id) == 0 && (keep_ctr == NULL ||
		    strcmp(r->ctr, keep_ctr) != 0)) {
			TAILQ_REMOVE(&p->rows, r, link);
			p->n--;
			free(r);
			any = true;
		}
	}
	if (any || keep_ctr == NULL)
		(void)save_locked(p, id);
}

int
dock_preview_kept(struct dock_preview *p, const char *cap, char *ip,
    size_t iplen, uint16_t *portp)
{
	struct row *r;
	int rv = -EAGAIN;

	pthread_mutex_lock(&p->mu);
	if ((r = find_cap_locked(p, cap)) == NULL)
		rv = -ENOENT;
	else if (r->ip[0] != '\0' && msc_now_ms() - r->ip_at < ADDR_KEEP_MS) {
		snprintf(ip, iplen, "%s", r->ip);
		*portp = r->port;
		rv = 0;
	}
	pthread_mutex_unlock(&p->mu);
	return rv;
}

void
dock_preview_forget(struct dock_preview *p, const char *id)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	forget_locked(p, id, NULL);
	pthread_mutex_unlock(&p->mu);
}

void
dock_preview_moved(struct dock_preview *p, const char *id)
{
	struct row *r;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	TAILQ_FOREACH(r, &p->rows, link)
		if (strcmp(r->id, id) == 0) {
			r->ip[0] = '\0';
			r->moved++;
		}
	pthread_mutex_unlock(&p->mu);
}

void
dock_preview_renamed(struct dock_preview *p, const char *id, const char *old,
    const char *now)
{
	struct row *r;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	if (now != NULL && ctr_valid(now) && old[0] != '\0') {
		TAILQ_FOREACH(r, &p->rows, link)
			if (strcmp(r->id, id) == 0 && strcmp(r->ctr, old) == 0)
				snprintf(r->ctr, sizeof(r->ctr), "%s", now);
		forget_locked(p, id, now);
		(void)save_locked(p, id);
	} else
		forget_locked(p, id, NULL);
	pthread_mutex_unlock(&p->mu);
}

int
dock_preview_ports(struct dock_preview *p, const char *id, uint32_t **ports,
    size_t *n)
{
	struct row *r;
	size_t k;

	*ports = NULL;
	*n = 0;
	if (p == NULL)
		return 0;
	pthread_mutex_lock(&p->mu);
	if ((k = count_locked(p, id)) > 0 &&
	    (*ports = calloc(k, sizeof(**ports))) == NULL) {
		pthread_mutex_unlock(&p->mu);
		return -ENOMEM;
	}
	TAILQ_FOREACH(r, &p->rows, link)
		if (strcmp(r->id, id) == 0 && *n < k)
			(*ports)[(*n)++] = r->port;
	pthread_mutex_unlock(&p->mu);
	return 0;
}

int
dock_preview_target(struct dock_preview *p, const char *cap, bool fresh,
    char *ip, size_t iplen, uint16_t *portp)
{
	char id[MSC_SLUG_MAX + 1], err[256], addr[64] = "";
	json_t *ctr = NULL;
	struct row *r;
	unsigned moved;
	int rv;

	pthread_mutex_lock(&p->mu);
	if ((r = find_cap_locked(p, cap)) == NULL) {
		pthread_mutex_unlock(&p->mu);
		return -ENOENT;
	}
	*portp = r->port;
	if (!fresh && r->ip[0] != '\0' &&
	    msc_now_ms() - r->ip_at < ADDR_KEEP_MS) {
		snprintf(ip, iplen, "%s", r->ip);
		pthread_mutex_unlock(&p->mu);
		return 0;
	}
	snprintf(id, sizeof(id), "%s", r->id);
	moved = r->moved;
	pthread_mutex_unlock(&p->mu);

	rv = dock_find(p->d, id, &ctr, err, sizeof(err));
	pthread_mutex_lock(&p->mu);
	/* Another container by that name now (the computer was deleted
	 * and made again, by us or behind our back): its rows are not this
	 * one's. */
	if (rv == 0)
		forget_locked(p, id, ctr_id(ctr));
	if (rv == 0)
		rv = address_of(ctr, addr, sizeof(addr));
	if (rv == -ENOENT)
		forget_locked(p, id, NULL);
	else if ((r = find_cap_locked(p, cap)) == NULL)
		rv = -ENOENT;           /* revoked meanwhile */
	else if (rv == 0 && r->moved != moved)
		rv = -ENETUNREACH;      /* restarted meanwhile: ask again */
	else if (rv == 0) {
		snprintf(r->ip, sizeof(r->ip), "%s", addr);
		r->ip_at = msc_now_ms();
	}
	pthread_mutex_unlock(&p->mu);
	json_decref(ctr);
	if (rv == 0)
		snprintf(ip, iplen, "%s", addr);
	else if (rv != -ENOENT)
		rv = -ENETUNREACH;
	return rv;
}
