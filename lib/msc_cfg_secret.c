/*
 * msc_cfg_secret.c - secrets on the command line (msc_cfg_int.h): a
 * token given as a flag is readable by every local user in ps and
 * /proc/<pid>/cmdline, so the flag's bytes are blanked once copied and
 * the operator is pointed at the environment variable or --<flag>-file.
 */
#include "msc_cfg_int.h"
#include "msc_redact.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECRET_MAX 8192

char *
msc_cfg_secret_from_argv(const struct msc_cfg_opt *o, char *val)
{
	char *copy = strdup(val);
	size_t n = strlen(val);
	const char *env = o->env != NULL ? o->env : "the environment";

	/* o->env may list several variables: the first is the one named. */
	fprintf(stderr, PROG ": warning: --%s is visible to other users in "
	    "ps; use %.*s or --%s-file\n", o->name, (int)strcspn(env, " "),
	    env, o->name);
	/* ps shows "*" and blanks; the length stays, the value does not. */
	if (n > 0) {
		val[0] = '*';
		memset(val + 1, '\0', n - 1);
	}
	return copy;
}

/* Adds the secrets of one table's options, filled at base. */
static int
redact_table(const struct msc_cfg_opt *opts, size_t nopts, const char *base)
{
	int rv;

	for (size_t i = 0; i < nopts; i++) {
		const struct msc_cfg_opt *o = &opts[i];
		const char *v;

		if (o->kind != MSC_OPT_SECRET && o->kind != MSC_OPT_SECRET_FILE)
			continue;
		v = *(const char *const *)(base + o->off);
		if (v != NULL && (rv = msc_redact_add(v)) != 0 && rv != -EINVAL)
			return rv;
		/* The variables it also comes from, space-separated. */
		for (const char *e = o->env; e != NULL && *e != '\0';) {
			size_t len = strcspn(e, " ");
			char name[128];

			snprintf(name, sizeof(name), "%.*s", (int)len, e);
			v = getenv(name);
			if (v != NULL && (rv = msc_redact_add(v)) != 0 &&
			    rv != -EINVAL)
				return rv;
			e += len + strspn(e + len, " ");
		}
	}
	return 0;
}

int
msc_cfg_secrets_redact(const struct msc_cfg *cfg)
{
	int rv = redact_table(msc_cfg_opts, msc_cfg_nopts, (const char *)cfg);

	for (size_t i = 0; rv == 0 && i < cfg->nparts; i++)
		rv = redact_table(cfg->parts[i].table->opts,
		    cfg->parts[i].table->nopts, cfg->parts[i].own);
	return rv;
}

/* Reads up to max bytes of fd; returns the count or -errno. */
static ssize_t
read_some(int fd, char *buf, size_t max)
{
	size_t got = 0;

	while (got < max) {
		ssize_t n = read(fd, buf + got, max - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
		if (memchr(buf + got - (size_t)n, '\n', (size_t)n) != NULL)
			break;
	}
	return (ssize_t)got;
}

/* A refused file: the usage line first, as for any bad argument. */
#define REFUSE(...)                                                         \
	do {                                                                \
		msc_cfg_usage(stderr, prog);                                \
		msc_cfg_error(__VA_ARGS__);                                 \
	} while (0)

int
msc_cfg_secret_read(const struct msc_cfg_opt *o,
    const struct msc_program *prog, const char *path, char **outp)
{
	char buf[SECRET_MAX + 1], *out = NULL;
	struct stat st;
	ssize_t n;
	size_t len;
	int fd, rv = 0;

	/* O_NONBLOCK off: a FIFO such as <(pass show x) is fine. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		const char *why = strerror(errno);  /* before any output */

		REFUSE("argument --%s: cannot read '%s': %s", o->name, path,
		    why);
		return -EINVAL;
	}
	if (fstat(fd, &st) != 0) {
		rv = -errno;
	} else if (S_ISREG(st.st_mode) && (st.st_mode & 022) != 0) {
		REFUSE("argument --%s: '%s' is writable by group or "
			      "others (mode %04o); chmod 600 it", o->name, path,
		    (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EINVAL;
	} else if (S_ISREG(st.st_mode) && (st.st_mode & 044) != 0) {
		fprintf(stderr, PROG ": warning: --%s: '%s' is readable by "
		    "group or others (mode %04o); chmod 600 it\n", o->name,
		    path, (unsigned)(st.st_mode & 07777));
	}
	n = rv == 0 ? read_some(fd, buf, SECRET_MAX) : rv;
	close(fd);
	if (n < 0) {
		REFUSE("argument --%s: cannot read '%s': %s", o->name,
		    path, strerror((int)-n));
		return -EINVAL;
	}
	buf[n] = '\0';
	len = strcspn(buf, "\n");
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	if (len == (size_t)n && n == SECRET_MAX) {
		REFUSE("argument --%s: the first line of '%s' is longer "
			      "than %d bytes", o->name, path, SECRET_MAX);
		rv = -EINVAL;
	} else if (len == 0) {
		REFUSE("argument --%s: the first line of '%s' is empty",
		    o->name, path);
		rv = -EINVAL;
	}
	if (rv == 0 && (out = strndup(buf, len)) == NULL)
		rv = -ENOMEM;
	explicit_bzero(buf, sizeof(buf));
	if (rv != 0)
		return rv;
	*outp = out;
	return 0;
}
