/*
 * mcp_http_principals.c - who is calling /mcp: the bearer token, compared
 * in constant time, names a principal. With --tokens-file (or
 * KILNTAINERS_TOKENS_FILE) each line `NAME TOKEN` is one principal, '#'
 * starts a comment, and the file is read again on SIGHUP (a file that
 * does not parse keeps the table in use). With a single token
 * (KILNTAINERS_AUTH_TOKEN) or none, every caller is the one unnamed
 * principal. Tokens are never logged: an error names the file and the
 * line, and each token is given to msc_redact.
 */
#include "mcp_http_int.h"
#include "msc_file.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_redact.h"

#define TOKENS_FILE_MAX (1024 * 1024)
#define TOKENS_MAX 4096
#define TOKEN_MIN 16            /* bytes: shorter is guessable */
#define TOKEN_MAX 1024

struct principal {
	char name[EDGE_PRINCIPAL_MAX + 1];
	char *token;
	size_t len;
};

struct http_principals {
	size_t n;
	struct principal p[];
};

static void
principals_free(struct http_principals *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++) {
		explicit_bzero(t->p[i].token, t->p[i].len);
		free(t->p[i].token);
	}
	free(t);
}

/* Constant-time comparison of a presented secret with ours. */
static bool
secret_equal(const char *given, size_t glen, const char *ours, size_t olen)
{
	unsigned char diff = (unsigned char)(glen != olen);

	for (size_t i = 0; i < olen; i++)
		diff |= (unsigned char)(ours[i] ^ (i < glen ? given[i] : 0));
	return diff == 0;
}

static bool
name_ok(const char *s, size_t n)
{
	if (n == 0 || n > EDGE_PRINCIPAL_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) &&
		    strchr("._-@", s[i]) == NULL)
			return false;
	return true;
}

/* Reads the whole of path (at most TOKENS_FILE_MAX); NULL after logging. */
static char *
read_file(const char *path)
{
	struct stat st;
	char *buf = NULL;
	size_t len;
	int fd, rv;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		msc_log_err("--tokens-file: cannot read '%s': %s", path,
		    strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		msc_log_err("--tokens-file: '%s' is not a regular file", path);
		close(fd);
		return NULL;
	}
	if ((st.st_mode & 022) != 0) {
		msc_log_err("--tokens-file: '%s' is writable by group or others "
		    "(mode %04o); chmod 600 it", path,
		    (unsigned)(st.st_mode & 07777));
		close(fd);
		return NULL;
	}
	if ((st.st_mode & 044) != 0)
		msc_log_warn("--tokens-file: '%s' is readable by group or "
		    "others (mode %04o); chmod 600 it", path,
		    (unsigned)(st.st_mode & 07777));
	rv = msc_file_read_whole(fd, TOKENS_FILE_MAX, &buf, &len);
	close(fd);
	if (rv == -EFBIG || rv == -ENOMEM)
		msc_log_err("--tokens-file: '%s' is larger than %d bytes", path,
		    TOKENS_FILE_MAX);
	else if (rv != 0)
		msc_log_err("--tokens-file: cannot read '%s': %s", path,
		    strerror(-rv));
	return rv == 0 ? buf : NULL;
}

/* One line's NAME and TOKEN into e; false when it is not one. */
static bool
parse_line(char *line, struct principal *e, const char **why)
{
	char *name, *token, *rest, *save = NULL;

	name = strtok_r(line, " \t\r", &save);
	token = strtok_r(NULL, " \t\r", &save);
	rest = strtok_r(NULL, " \t\r", &save);
	if (name == NULL || token == NULL || rest != NULL) {
		*why = "expected 'NAME TOKEN'";
		return false;
	}
	if (!name_ok(name, strlen(name))) {
		*why = "a NAME is 1 to 64 letters, digits, '.', '_', '-' or '@'";
		return false;
	}
	e->len = strlen(token);
	if (e->len < TOKEN_MIN || e->len > TOKEN_MAX) {
		*why = "a TOKEN is 16 to 1024 bytes";
		return false;
	}
	snprintf(e->name, sizeof(e->name), "%s", name);
	if ((e->token = strdup(token)) == NULL) {
		*why = "out of memory";
		return false;
	}
	return true;
}

/* The table of path, or NULL after logging why (never a token). */
static struct http_principals *
principals_load(const char *path)
{
	struct http_principals *t;
	char *buf = read_file(path), *line, *save = NULL;
	size_t lineno = 0, cap = 0;
	bool bad = false;

	if (buf == NULL)
		return NULL;
	for (const char *q = buf; *q != '\0'; q++)
		cap += *q == '\n';
	cap = cap + 1 > TOKENS_MAX ? TOKENS_MAX : cap + 1;
	if ((t = calloc(1, sizeof(*t) + cap * sizeof(t->p[0]))) == NULL) {
		free(buf);
		return NULL;
	}
	for (char *p = buf; !bad && p != NULL; p = save) {
		const char *why = NULL;
		char *nl = strchr(p, '\n');

		save = nl != NULL ? nl + 1 : NULL;
		if (nl != NULL)
			*nl = '\0';
		lineno++;
		line = p + strspn(p, " \t\r");
		if (*line == '\0' || *line == '#')
			continue;
		if (t->n == cap) {
			msc_log_err("--tokens-file: '%s': more than %d "
			    "principals", path, TOKENS_MAX);
			bad = true;
			break;
		}
		if (!parse_line(line, &t->p[t->n], &why)) {
			msc_log_err("--tokens-file: '%s' line %zu: %s", path,
			    lineno, why);
			bad = true;
			break;
		}
		for (size_t i = 0; i < t->n && why == NULL; i++) {
			if (strcmp(t->p[i].name, t->p[t->n].name) == 0)
				why = "a NAME given twice";
			else if (t->p[i].len == t->p[t->n].len &&
			    memcmp(t->p[i].token, t->p[t->n].token,
				t->p[i].len) == 0)
				why = "a TOKEN given twice";
		}
		t->n++;
		if (why != NULL) {
			msc_log_err("--tokens-file: '%s' line %zu: %s", path,
			    lineno, why);
			bad = true;
		}
	}
	explicit_bzero(buf, strlen(buf));
	free(buf);
	if (!bad && t->n == 0) {
		msc_log_err("--tokens-file: '%s' names no principal", path);
		bad = true;
	}
	if (bad) {
		principals_free(t);
		return NULL;
	}
	for (size_t i = 0; i < t->n; i++) {
		int rv = msc_redact_add(t->p[i].token);

		if (rv == -ENOSPC) {
			msc_log_warn("--tokens-file: more tokens than the log "
			    "redaction keeps (%d); tokens are never logged "
			    "anyway", MSC_REDACT_MAX);
			break;
		}
	}
	return t;
}

int
http_principals_init(struct edge_http *h)
{
	if (h->cfg->tokens_file == NULL)
		return 0;
	if ((h->principals = principals_load(h->cfg->tokens_file)) == NULL)
		return -EINVAL;
	msc_log_info("http: %zu principals from --tokens-file",
	    h->principals->n);
	return 0;
}

void
http_principals_reload(struct edge_http *h)
{
	struct http_principals *t, *old;

	if (h->cfg->tokens_file == NULL)
		return;
	if ((t = principals_load(h->cfg->tokens_file)) == NULL) {
		msc_log_err("http: --tokens-file not read again; the %zu "
		    "principals in use stay", h->principals->n);
		return;
	}
	pthread_mutex_lock(&h->principals_mu);
	old = h->principals;
	h->principals = t;
	pthread_mutex_unlock(&h->principals_mu);
	principals_free(old);
	msc_log_info("http: --tokens-file read again: %zu principals", t->n);
}

void
http_principals_fini(struct edge_http *h)
{
	principals_free(h->principals);
	h->principals = NULL;
	pthread_mutex_destroy(&h->principals_mu);
}

/*
 * `Authorization: Bearer <token>`: every token of the table is compared
 * (in constant time, none skipped), so the time taken says nothing of
 * which matched or how far.
 */
bool
http_authorized(struct http_call *c)
{
	struct edge_http *h = c->h;
	const char *token = h->cfg->auth_token;
	const char *auth, *given, *sp;
	size_t glen, match = SIZE_MAX;

	c->principal[0] = '\0';
	if (h->cfg->tokens_file == NULL && (token == NULL || *token == '\0'))
		return true;
	auth = http_header(c, "Authorization");
	if (auth == NULL || (sp = strchr(auth, ' ')) == NULL ||
	    (size_t)(sp - auth) != 6 || strncasecmp(auth, "Bearer", 6) != 0)
		return false;
	given = sp + 1;
	glen = strlen(given);
	if (h->cfg->tokens_file == NULL)
		return secret_equal(given, glen, token, strlen(token));
	pthread_mutex_lock(&h->principals_mu);
	for (size_t i = 0; i < h->principals->n; i++) {
		const struct principal *e = &h->principals->p[i];
		bool eq = secret_equal(given, glen, e->token, e->len);

		match = eq ? i : match;
	}
	if (match != SIZE_MAX)
		memcpy(c->principal, h->principals->p[match].name,
		    sizeof(c->principal));
	pthread_mutex_unlock(&h->principals_mu);
	return match != SIZE_MAX;
}

bool
http_principal_charge(struct http_call *c)
{
	char owner[HTTP_OWNER_MAX];

	if (c->principal[0] == '\0')
		return true;
	snprintf(owner, sizeof(owner), "principal:%s", c->principal);
	if (http_conns_charge(c->h->conns, c->conn, owner) == 0)
		return true;
	http_answer_rpc_error(c, 429, -32000, "Too many connections of this "
	    "principal (--max-address-connections); retry when one of its "
	    "requests has ended");
	return false;
}
