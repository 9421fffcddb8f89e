/*
 * modal_conf.c - Modal credentials: flags, environment, ~/.modal.toml.
 */
#include "modal_conf.h"

#include "msc_redact.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One parsed table: the keys we know, as text. */
struct table {
	struct modal_profile p;
	bool seen;
};

static const char *
skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* Appends a UTF-8 encoding of cp. */
static size_t
put_utf8(char *o, size_t room, unsigned long cp)
{
	if (cp < 0x80 && room >= 1) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800 && room >= 2) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000 && room >= 3) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp < 0x110000 && room >= 4) {
		o[0] = (char)(0xf0 | cp >> 18);
		o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[3] = (char)(0x80 | (cp & 0x3f));
		return 4;
	}
	return 0;
}

/*
 * Reads a quoted string at *sp (basic "..." with escapes, or literal
 * '...') into out. Returns 0 or -EINVAL; *sp moves past it.
 */
static int
read_string(const char **sp, const char *end, char *out, size_t outlen)
{
	const char *s = *sp;
	char q = *s++;
	size_t o = 0;

	while (s < end && *s != q) {
		char ch = *s++;

		if (q == '"' && ch == '\\') {
			if (s >= end)
				return -EINVAL;
			ch = *s++;
			switch (ch) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case '"': case '\\': break;
			case 'u': case 'U': {
				int n = ch == 'u' ? 4 : 8;
				char hex[9];
				char *e;
				unsigned long cp;

				if (end - s < n)
					return -EINVAL;
				memcpy(hex, s, (size_t)n);
				hex[n] = '\0';
				cp = strtoul(hex, &e, 16);
				if (*e != '\0')
					return -EINVAL;
				s += n;
				if (o + 4 < outlen)
					o += put_utf8(out + o, outlen - o - 1, cp);
				continue;
			}
			default:
				return -EINVAL;
			}
		}
		if (o + 1 < outlen)
			out[o++] = ch;
	}
	if (s >= end)
		return -EINVAL;         /* unterminated */
	out[o] = '\0';
	*sp = s + 1;
	return 0;
}

/* A bare or quoted key (or table name) at *sp. */
static int
read_key(const char **sp, const char *end, char *out, size_t outlen)
{
	const char *s = *sp;
	size_t o = 0;

	if (s < end && (*s == '"' || *s == '\''))
		return read_string(sp, end, out, outlen);
	while (s < end && (isalnum((unsigned char)*s) || *s == '_' ||
			      *s == '-' || *s == '.')) {
		if (o + 1 < outlen)
			out[o++] = *s;
		s++;
	}
	if (o == 0)
		return -EINVAL;
	out[o] = '\0';
	*sp = s;
	return 0;
}

static void
set_field(struct modal_profile *p, const char *key, const char *val,
    bool boolean, bool bval)
{
	struct {
		const char *name;
		char *dst;
		size_t len;
	} f[] = {
		{ "token_id", p->token_id, sizeof(p->token_id) },
		{ "token_secret", p->token_secret, sizeof(p->token_secret) },
		{ "server_url", p->server_url, sizeof(p->server_url) },
		{ "environment", p->environment, sizeof(p->environment) },
		{ "image_builder_version", p->image_builder_version,
		    sizeof(p->image_builder_version) },
	};

	if (strcmp(key, "active") == 0) {
		p->active = boolean && bval;
		return;
	}
	if (boolean)
		return;
	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++)
		if (strcmp(key, f[i].name) == 0) {
			size_t n = strnlen(val, f[i].len - 1);

			memcpy(f[i].dst, val, n);       /* bounded, like the */
			f[i].dst[n] = '\0';             /* other fields */
		}
}

/* Parses one `key = value` line into t (NULL: outside any table). */
static int
parse_pair(const char *s, const char *end, struct table *t)
{
	char key[64], val[1024];
	bool boolean = false, bval = false;

	if (read_key(&s, end, key, sizeof(key)) != 0)
		return -EINVAL;
	s = skip_ws(s, end);
	if (s >= end || *s != '=')
		return -EINVAL;
	s = skip_ws(s + 1, end);
	if (s >= end)
		return -EINVAL;
	if (*s == '"' || *s == '\'') {
		if (end - s >= 3 && s[1] == s[0] && s[2] == s[0])
			return -EINVAL; /* multi-line strings: not ours */
		if (read_string(&s, end, val, sizeof(val)) != 0)
			return -EINVAL;
	} else {
		size_t n = 0;

		while (s + n < end && s[n] != ' ' && s[n] != '\t' && s[n] != '#')
			n++;
		if (n == 0 || n >= sizeof(val))
			return -EINVAL;
		memcpy(val, s, n);
		val[n] = '\0';
		s += n;
		if (strcmp(val, "true") == 0 || strcmp(val, "false") == 0) {
			boolean = true;
			bval = val[0] == 't';
		}
	}
	s = skip_ws(s, end);
	if (s < end && *s != '#')
		return -EINVAL;
	if (t != NULL)
		set_field(&t->p, key, val, boolean, bval);
	return 0;
}

int
modal_conf_parse(const char *text, const char *want,
    struct modal_profile *p, char *err, size_t errlen)
{
	struct table cur = { 0 }, first = { 0 }, active = { 0 }, named = { 0 };
	const char *line = text;
	bool in_table = false;
	int lineno = 0;

	memset(p, 0, sizeof(*p));
	while (*line != '\0') {
		const char *nl = strchr(line, '\n');
		const char *end = nl != NULL ? nl : line + strlen(line);
		const char *s = skip_ws(line, end);
		const char *e = end;

		lineno++;
		if (e > s && e[-1] == '\r')
			e--;
		if (s < e && *s == '[') {
			char name[128];

			if (in_table) {
				if (!first.seen)
					first = cur;
				if (cur.p.active && !active.seen)
					active = cur;
				if (want && strcmp(cur.p.name, want) == 0)
					named = cur;
			}
			memset(&cur, 0, sizeof(cur));
			s = skip_ws(s + 1, e);
			if (s < e && *s == '[')
				goto bad;       /* arrays of tables: not ours */
			if (read_key(&s, e, name, sizeof(name)) != 0)
				goto bad;
			s = skip_ws(s, e);
			if (s >= e || *s != ']')
				goto bad;
			s = skip_ws(s + 1, e);
			if (s < e && *s != '#')
				goto bad;
			snprintf(cur.p.name, sizeof(cur.p.name), "%s", name);
			cur.seen = in_table = true;
		} else if (s < e && *s != '#') {
			if (parse_pair(s, e, in_table ? &cur : NULL) != 0)
				goto bad;
		}
		line = nl != NULL ? nl + 1 : end;
	}
	if (in_table) {
		if (!first.seen)
			first = cur;
		if (cur.p.active && !active.seen)
			active = cur;
		if (want && strcmp(cur.p.name, want) == 0)
			named = cur;
	}
	if (want != NULL && *want != '\0') {
		if (!named.seen) {
			snprintf(err, errlen, "profile '%s' is not in the Modal "
					      "config file", want);
			return -ENOENT;
		}
		*p = named.p;
	} else if (active.seen)
		*p = active.p;
	else if (first.seen)
		*p = first.p;
	else
		return -ENOENT;
	explicit_bzero(&cur, sizeof(cur));
	explicit_bzero(&first, sizeof(first));
	explicit_bzero(&active, sizeof(active));
	explicit_bzero(&named, sizeof(named));
	return 0;
bad:
	explicit_bzero(&cur, sizeof(cur));
	explicit_bzero(&first, sizeof(first));
	explicit_bzero(&active, sizeof(active));
	explicit_bzero(&named, sizeof(named));
	snprintf(err, errlen, "line %d is not valid TOML for a Modal profile",
	    lineno);
	return -EINVAL;
}

/* Reads a whole small file; -ENOENT when it does not exist. */
static int
read_file(const char *path, char **textp)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t have = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > MODAL_CONF_MAX) {
		close(fd);
		return -EFBIG;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while (have < (size_t)st.st_size &&
	    (n = read(fd, buf + have, (size_t)st.st_size - have)) > 0)
		have += (size_t)n;
	close(fd);
	buf[have] = '\0';
	*textp = buf;
	return 0;
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

static void
pick(char *dst, size_t len, const char *a, const char *b, const char *c)
{
	const char *v = a != NULL && *a ? a : b != NULL && *b ? b : c;

	snprintf(dst, len, "%s", v != NULL ? v : "");
}

int
modal_conf_resolve(const char *flag_id, const char *flag_secret,
    struct modal_creds *c, char *err, size_t errlen)
{
	struct modal_profile p;
	const char *path = env("MODAL_CONFIG_PATH"), *home = env("HOME");
	char *text = NULL, fallback[512], detail[256];
	int rv;

	memset(c, 0, sizeof(*c));
	memset(&p, 0, sizeof(p));
	if (path == NULL && home != NULL) {
		snprintf(fallback, sizeof(fallback), "%s/.modal.toml", home);
		path = fallback;
	}
	if (path != NULL && (rv = read_file(path, &text)) == 0) {
		snprintf(c->config_path, sizeof(c->config_path), "%s", path);
		rv = modal_conf_parse(text, env("MODAL_PROFILE"), &p, detail,
		    sizeof(detail));
		explicit_bzero(text, strlen(text));
		free(text);
		if (rv == -EINVAL || (rv == -ENOENT && env("MODAL_PROFILE"))) {
			snprintf(err, errlen, "Cannot use the Modal config file "
					      "%s: %s", path, detail);
			return -EINVAL;
		}
	} else if (path != NULL && rv != -ENOENT) {
		snprintf(err, errlen, "Cannot read the Modal config file %s: %s",
		    path, strerror(-rv));
		return -EINVAL;
	}
	pick(c->token_id, sizeof(c->token_id), flag_id, env("MODAL_TOKEN_ID"),
	    p.token_id);
	pick(c->token_secret, sizeof(c->token_secret), flag_secret,
	    env("MODAL_TOKEN_SECRET"), p.token_secret);
	/* From the profile file too: kept out of the logs (msc_redact.h). */
	if ((rv = msc_redact_add(c->token_secret)) != 0 && rv != -EINVAL) {
		snprintf(err, errlen, "Cannot keep the Modal token secret out "
		    "of the logs: %s", strerror(-rv));
		explicit_bzero(&p, sizeof(p));
		return rv;
	}
	pick(c->server_url, sizeof(c->server_url), env("MODAL_SERVER_URL"),
	    p.server_url, MODAL_DEFAULT_SERVER_URL);
	pick(c->environment, sizeof(c->environment), env("MODAL_ENVIRONMENT"),
	    p.environment, NULL);
	pick(c->image_builder_version, sizeof(c->image_builder_version),
	    env("MODAL_IMAGE_BUILDER_VERSION"), p.image_builder_version, NULL);
	explicit_bzero(&p, sizeof(p));
	return 0;
}

void
modal_creds_clear(struct modal_creds *c)
{
	explicit_bzero(c, sizeof(*c));
}
