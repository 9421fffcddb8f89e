/* sh_redir.c - redirections: files, /dev/null and /dev/std*, heredocs. */
#include "sh.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
sh_rstate_close(struct sh_rstate *rs)
{
	for (int i = rs->nfiles - 1; i >= 0; i--)
		fclose(rs->files[i]);
	for (int i = 0; i < rs->nmems; i++) {
		tb_mem_free(rs->mems[i]);
		free(rs->mems[i]);
	}
	rs->nfiles = rs->nmems = 0;
}

static FILE *
keep(struct sh_rstate *rs, FILE *f)
{
	if (f != NULL && rs->nfiles < SH_REDIR_MAX)
		rs->files[rs->nfiles++] = f;
	else if (f != NULL) {
		fclose(f);
		return NULL;
	}
	return f;
}

/* A reader over a copy of text (heredocs, here-strings). */
static FILE *
text_reader(struct sh_rstate *rs, const char *text)
{
	struct tb_mem *m;
	FILE *f;

	if (rs->nmems == SH_REDIR_MAX || rs->nfiles == SH_REDIR_MAX)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->data = tb_xstrdup(text);
	m->len = m->cap = strlen(text);
	rs->mems[rs->nmems++] = m;
	f = tb_mem_reader(m);
	return keep(rs, f);
}

/* Opens a redirection target; /dev/null and /dev/std* are emulated. */
static FILE *
open_target(struct sh *sh, struct sh_rstate *rs, struct tb_io *io,
    const char *path, const char *mode)
{
	FILE *f;

	if (strcmp(path, "/dev/null") == 0)
		return keep(rs, tb_null_stream(mode));
	if (strcmp(path, "/dev/stdout") == 0)
		return io->out;
	if (strcmp(path, "/dev/stderr") == 0)
		return io->err;
	if (strcmp(path, "/dev/stdin") == 0)
		return io->in;
	if ((f = fopen(path, mode)) == NULL) {
		tb_err(sh->io == io ? io : io, "sh", "%s: %s", path,
		    strerror(errno));
		return NULL;
	}
	return keep(rs, f);
}

int
sh_redirect(struct sh *sh, struct sh_redir *r, struct tb_io *io,
    struct sh_rstate *rs)
{
	for (; r != NULL; r = r->next) {
		char *t = NULL;
		FILE *f = NULL;

		if (r->kind == R_HEREDOC) {
			char *body = r->body ? (r->quoted ? tb_xstrdup(r->body)
			    : sh_expand_heredoc(sh, r->body)) : tb_xstrdup("");

			if (body == NULL)
				return -1;
			f = text_reader(rs, body);
			free(body);
			if (f == NULL)
				return -1;
			if (r->fd == 0)
				io->in = f;
			continue;
		}
		if ((t = sh_expand_str(sh, r->word)) == NULL)
			return -1;
		switch (r->kind) {
		case R_HERESTR: {
			struct tb_buf b = { 0 };

			tb_buf_adds(&b, t);
			tb_buf_addc(&b, '\n');
			f = text_reader(rs, tb_buf_str(&b));
			tb_buf_free(&b);
			break;
		}
		case R_IN:
			f = open_target(sh, rs, io, t, "r");
			break;
		case R_RDWR:
			f = open_target(sh, rs, io, t, access(t, F_OK) == 0 ?
			    "r+" : "w+");
			break;
		case R_OUT:
		case R_APPEND:
		case R_BOTH:
		case R_BOTH_APPEND:
			f = open_target(sh, rs, io, t, r->kind == R_APPEND ||
			    r->kind == R_BOTH_APPEND ? "a" : "w");
			break;
		case R_DUP_OUT:
		case R_DUP_IN:
			if (strcmp(t, "-") == 0)
				f = keep(rs, tb_null_stream(r->kind == R_DUP_IN
				    ? "r" : "w"));
			else if (strcmp(t, "0") == 0)
				f = io->in;
			else if (strcmp(t, "1") == 0)
				f = io->out;
			else if (strcmp(t, "2") == 0)
				f = io->err;
			else if (r->kind == R_DUP_OUT && r->fd == 1 &&
			    strspn(t, "0123456789") != strlen(t)) {
				/* ">&file": both streams to file. */
				f = open_target(sh, rs, io, t, "w");
				if (f != NULL)
					io->err = f;
			} else {
				tb_err(io, "sh", "%s: bad file descriptor", t);
				f = NULL;
			}
			break;
		case R_HEREDOC:
			break;
		}
		free(t);
		if (f == NULL)
			return -1;
		if (r->kind == R_BOTH || r->kind == R_BOTH_APPEND)
			io->out = io->err = f;
		else if (r->fd == 0)
			io->in = f;
		else if (r->fd == 1)
			io->out = f;
		else if (r->fd == 2)
			io->err = f;
	}
	return 0;
}

