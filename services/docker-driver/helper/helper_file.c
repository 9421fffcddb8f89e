/*
 * helper_file.c - the file tools' commands (issue 29; helper_file.h): the
 * dispatch and `read` (a path resolved and guarded: helper_file_path.c).
 *
 * The helper runs them as the exec's own command: the same user, the same
 * capabilities and namespaces as any terminal_execute command, so they
 * reach no file a command could not. What they add is a guard for what an
 * agent should not be led to by a path or a symlink: /proc and /sys (the
 * kernel's, by file system type, not by name: a bind mount elsewhere is
 * refused too), the helper's own folder /.msc (its socket) and its binary,
 * devices, fifos and sockets (refused before they are opened, and the
 * opened file is checked again, so a swap in between is refused too: a
 * fifo opened O_NONBLOCK never blocks).
 *
 * `read` answers a text file's lines from OFFSET (1 the first), at most
 * LIMIT of them and BUDGET bytes of JSON in all, invalid UTF-8 as U+FFFD;
 * a binary file whole as base64 when it fits in BUDGET, else its size and
 * type. It hashes the whole file (sha256) up to HXF_SCAN_MAX and never
 * holds more than the window: a 10 GB sparse file answers at once.
 */
#include "helper.h"
#include "helper_file.h"
#include "helper_sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HXF_CHUNK	65536
/* The answer's room for everything but the content. */
#define HXF_META	768

/* ---- read --------------------------------------------------------------- */

/* Opens the regular file t names, checked again once open; -1. */
static int
open_regular(struct hxf_target *t, const char *path)
{
	const char *why;
	struct stat st;
	int fd;

	if (!t->exists)
		return hxp_fail("%s: no such file", path), -1;
	if (!S_ISREG(t->st.st_mode))
		return hxp_fail("%s: refused: it is %s", path,
		    hxf_kind(t->st.st_mode)), -1;
	fd = openat(t->dirfd, t->base, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
	    O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return hxp_fail("%s: %s", path, strerror(errno)), -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != t->st.st_dev || st.st_ino != t->st.st_ino) {
		close(fd);
		return hxp_fail("%s: refused: it changed while it was opened",
		    path), -1;
	}
	if ((why = hxf_forbidden(fd, &st)) != NULL) {
		close(fd);
		return hxp_fail("%s: refused: the path is %s", path, why), -1;
	}
	t->st = st;
	return fd;
}

static ssize_t
read_some(int fd, void *buf, size_t n)
{
	ssize_t r;

	while ((r = read(fd, buf, n)) < 0 && errno == EINTR)
		;
	return r;
}

static void
out_head(struct out *o, const struct hxf_target *t, long long size,
    const char *sha)
{
	hxp_out_cstr(o, "{\"path\": ");
	hxp_out_str(o, t->shown, strlen(t->shown));
	hxp_out_fmt(o, ", \"size\": %lld, \"sha256\": ", size);
	if (sha != NULL)
		hxp_out_fmt(o, "\"%s\"", sha);
	else
		hxp_out_cstr(o, "null");
}

struct window {
	uint8_t *raw;
	size_t len, cap;
	long long line;         /* the line the next byte is in */
	long long start, end;   /* the window: lines [start, end) */
	long long begin;        /* the file offset where it starts */
	bool started, full;
};

/* Takes what of p[0..n) (at file offset `at`) belongs to the window. */
static void
window_add(struct window *w, const uint8_t *p, size_t n, long long at)
{
	while (n > 0 && !w->full) {
		const uint8_t *nl = memchr(p, '\n', n);
		size_t seg = nl != NULL ? (size_t)(nl - p) + 1 : n;

		if (w->line >= w->end) {
			w->full = true;
			break;
		}
		if (w->line >= w->start) {
			size_t k = seg;

			if (!w->started)
				w->begin = at;
			w->started = true;
			if (k > w->cap - w->len) {
				k = w->cap - w->len;
				w->full = true;
			}
			memcpy(w->raw + w->len, p, k);
			w->len += k;
		}
		if (nl != NULL)
			w->line++;
		at += (long long)seg;
		p += seg;
		n -= seg;
	}
}

static int
read_text(int fd, struct hxf_target *t, const char *path, long long offset,
    long long limit, long long budget, bool numbers, const uint8_t *first,
    size_t nfirst)
{
	struct window w = { .line = 1, .start = offset, .end = offset + limit };
	struct hx_sha256 sh;
	struct hxf_text r;
	struct out o = { 0 };
	long long size = t->st.st_size, at = 0, content_budget, newlines = 0;
	long long total, shown_end;
	bool hashing = size <= HXF_SCAN_MAX, eof = false;
	uint8_t *buf, last = '\n';
	size_t n = nfirst;
	char sha[65];

	content_budget = budget - HXF_META - 6 * (long long)strlen(t->shown);
	if (content_budget < 64)
		content_budget = 64;
	w.cap = (size_t)content_budget + 1;
	if ((w.raw = malloc(w.cap)) == NULL ||
	    (buf = malloc(HXF_CHUNK)) == NULL) {
		free(w.raw);
		return hxp_fail("out of memory");
	}
	memcpy(buf, first, nfirst);
	hx_sha256_init(&sh);
	for (;;) {
		size_t i = 0;
		ssize_t got;

		if (hashing)
			hx_sha256_add(&sh, buf, n);
		/* The lines before the window, counted fast. */
		while (i < n && w.line < w.start) {
			uint8_t *nl = memchr(buf + i, '\n', n - i);

			if (nl == NULL) {
				i = n;
				break;
			}
			w.line++;
			i = (size_t)(nl - buf) + 1;
		}
		if (i < n)
			window_add(&w, buf + i, n - i, at + (long long)i);
		for (i = 0; i < n; i++)
			newlines += buf[i] == '\n';
		if (n > 0)
			last = buf[n - 1];
		at += (long long)n;
		if (hashing && at > HXF_SCAN_MAX)
			hashing = false;        /* it grew past the bound */
		if (w.full && !hashing)
			break;
		if (!hashing && at >= HXF_SCAN_MAX) {
			free(buf);
			free(w.raw);
			return hxp_fail("%s: line %lld is past the first %lld "
			    "MiB of this %lld-byte file: read that part with "
			    "terminal_execute (tail, sed -n)", path, offset,
			    HXF_SCAN_MAX >> 20, size);
		}
		if ((got = read_some(fd, buf, HXF_CHUNK)) < 0) {
			int e = errno;

			free(buf);
			free(w.raw);
			return hxp_fail("%s: %s", path, strerror(e));
		}
		if (got == 0) {
			eof = true;
			break;
		}
		n = (size_t)got;
	}
	free(buf);
	if (eof)
		size = at;      /* what was read, had the file changed */
	total = newlines + (last != '\n' ? 1 : 0);
	if (eof && !w.started && offset > 1) {
		free(w.raw);
		return hxp_fail("%s: offset %lld is past the end of the file "
		    "(%lld lines)", path, offset, total);
	}
	if (hashing)
		hx_sha256_hex(&sh, sha);
	out_head(&o, t, size, hashing ? sha : NULL);
	hxp_out_fmt(&o, ", \"binary\": false, \"offset\": %lld, ", offset);
	hxp_out_cstr(&o, "\"content\": ");
	hxf_emit_text(&o, w.raw, w.len, offset, numbers,
	    (size_t)content_budget, &r);
	shown_end = w.started ? w.begin + (long long)r.used : size;
	hxp_out_fmt(&o, ", \"lines\": %lld", r.lines + (r.cut ? 1 : 0));
	hxp_out_fmt(&o, ", \"more\": %s", shown_end < size ? "true" :
	    "false");
	if (shown_end < size)
		hxp_out_fmt(&o, ", \"next_offset\": %lld", offset + r.lines +
		    (r.cut ? 1 : 0));
	if (r.cut)
		hxp_out_cstr(&o, ", \"line_truncated\": true");
	if (eof && hashing)
		hxp_out_fmt(&o, ", \"total_lines\": %lld", total);
	hxp_out_fmt(&o, ", \"invalid_utf8\": %s", r.invalid ? "true" :
	    "false");
	if (!hashing)
		hxp_out_fmt(&o, ", \"sha256_skipped\": \"the file is over "
		    "%lld MiB\"", HXF_SCAN_MAX >> 20);
	hxp_out_cstr(&o, "}");
	free(w.raw);
	return hxp_out_print(&o);
}

/* A binary file: whole, as base64, when it fits in the budget. */
static int
read_binary(int fd, struct hxf_target *t, const char *path, long long budget,
    const uint8_t *first, size_t nfirst)
{
	long long size = t->st.st_size, room;
	struct hx_sha256 sh;
	struct out o = { 0 };
	uint8_t *all = NULL;
	size_t len = nfirst;
	char sha[65];
	bool whole, hashed = true;

	room = (budget - HXF_META - 6 * (long long)strlen(t->shown)) / 4 * 3;
	/* Whole when it fits, and the size is true (it did not grow). */
	whole = size <= room && (long long)nfirst <= size;
	if (whole && (all = malloc((size_t)size + 1)) == NULL)
		return hxp_fail("out of memory");
	hx_sha256_init(&sh);
	hx_sha256_add(&sh, first, nfirst);
	if (all != NULL)
		memcpy(all, first, nfirst);
	/* Hashed up to HXF_SCAN_MAX; kept only when it fits. */
	while (size <= HXF_SCAN_MAX && hashed) {
		uint8_t chunk[HXF_CHUNK];
		ssize_t got = read_some(fd, chunk, sizeof(chunk));

		if (got < 0) {
			int e = errno;

			free(all);
			return hxp_fail("%s: %s", path, strerror(e));
		}
		if (got == 0)
			break;
		hx_sha256_add(&sh, chunk, (size_t)got);
		if (all != NULL && len + (size_t)got > (size_t)size) {
			free(all);      /* it grew past the room: not whole */
			all = NULL;
			whole = false;
		}
		if (all != NULL)
			memcpy(all + len, chunk, (size_t)got);
		len += (size_t)got;
		if (len > HXF_SCAN_MAX)
			hashed = false; /* it grew past the bound */
	}
	if (size > HXF_SCAN_MAX)
		hashed = false;
	if (hashed) {
		size = (long long)len;
		hx_sha256_hex(&sh, sha);
	}
	out_head(&o, t, size, hashed ? sha : NULL);
	hxp_out_fmt(&o, ", \"binary\": true, \"mime_type\": \"%s\"",
	    hxf_mime(first, nfirst));
	if (whole && all != NULL) {
		hxp_out_cstr(&o, ", \"blob\": ");
		hxf_out_base64(&o, all, len);
	} else
		hxp_out_fmt(&o, ", \"note\": \"a binary file of %lld bytes: "
		    "more than the %lld one answer carries (the server's "
		    "--reply-output-limit); copy or convert it with "
		    "terminal_execute\"", size, room < 0 ? 0 : room);
	if (!hashed)
		hxp_out_fmt(&o, ", \"sha256_skipped\": \"the file is over "
		    "%lld MiB\"", HXF_SCAN_MAX >> 20);
	hxp_out_cstr(&o, "}");
	free(all);
	return hxp_out_print(&o);
}

/* read PATH OFFSET LIMIT BUDGET NUMBERS */
static int
file_read(int argc, char **argv)
{
	long long offset, limit, budget, numbers;
	struct hxf_target t;
	uint8_t first[HXF_SNIFF];
	ssize_t n;
	int fd, rc;

	if (argc != 5 || !hxp_parse_num(argv[1], 0, 1LL << 60, &offset) ||
	    !hxp_parse_num(argv[2], 1, 1LL << 60, &limit) ||
	    !hxp_parse_num(argv[3], 1024, 1LL << 30, &budget) ||
	    !hxp_parse_num(argv[4], 0, 1, &numbers))
		return hxp_fail("usage: --file read PATH OFFSET LIMIT BUDGET "
		    "NUMBERS");
	if (offset == 0)
		offset = 1;
	if (hxf_resolve(argv[0], false, &t) != 0)
		return HX_EXIT_ERR;
	fd = open_regular(&t, argv[0]);
	close(t.dirfd);
	if (fd < 0)
		return HX_EXIT_ERR;
	if ((n = read_some(fd, first, sizeof(first))) < 0) {
		rc = hxp_fail("%s: %s", argv[0], strerror(errno));
		close(fd);
		return rc;
	}
	if (hxf_looks_binary(first, (size_t)n))
		rc = read_binary(fd, &t, argv[0], budget, first, (size_t)n);
	else
		rc = read_text(fd, &t, argv[0], offset, limit, budget,
		    numbers != 0, first, (size_t)n);
	close(fd);
	return rc;
}

int
hx_file_main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	umask(022);
	if (argc < 2)
		return hxp_fail("usage: --file read|write|edit|untar|tar ...");
	if (strcmp(argv[1], "read") == 0)
		return file_read(argc - 2, argv + 2);
	if (strcmp(argv[1], "write") == 0)
		return hxf_write(argc - 2, argv + 2);
	if (strcmp(argv[1], "edit") == 0)
		return hxf_edit(argc - 2, argv + 2);
	if (strcmp(argv[1], "untar") == 0)
		return hxf_untar(argc - 2, argv + 2);
	if (strcmp(argv[1], "tar") == 0)
		return hxf_tar(argc - 2, argv + 2);
	return hxp_fail("unknown --file command %s", argv[1]);
}
