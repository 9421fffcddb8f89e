/* sed.c - the stream editor's engine: input, addresses, commands. */
#include "sed.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>


/* Opens the next input file; false when there is none. */
bool
sed_open_next(struct sed *sd)
{
	while (sd->fi < (sd->nfiles > 0 ? sd->nfiles : 1)) {
		const char *path = sd->nfiles > 0 ? sd->files[sd->fi] : "-";

		sd->fi++;
		if ((sd->in = tb_open_in(sd->io, "sed", path)) != NULL) {
			sd->inname = path;
			return true;
		}
		sd->rc = 2;
	}
	return false;
}

/* Fills the lookahead from the current file (then the next ones). */
void
sed_fill_next(struct sed *sd, bool cross_files)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	sd->have_next = false;
	while (sd->in != NULL) {
		if ((n = getline(&line, &cap, sd->in)) > 0) {
			sd->next.len = 0;
			sd->next_nl = line[n - 1] == '\n';
			tb_buf_add(&sd->next, line, (size_t)n - sd->next_nl);
			tb_buf_str(&sd->next);
			sd->have_next = true;
			break;
		}
		tb_close_in(sd->io, sd->in);
		sd->in = NULL;
		if (!cross_files || !sed_open_next(sd))
			break;
	}
	free(line);
}

/* Moves the lookahead into the pattern space; false at end of input. */
static bool
read_line(struct sed *sd, bool append)
{
	if (!sd->have_next)
		return false;
	if (append)
		tb_buf_addc(&sd->ps, '\n');
	else
		sd->ps.len = 0;
	tb_buf_add(&sd->ps, sd->next.data, sd->next.len);
	tb_buf_str(&sd->ps);
	sd->ps_nl = sd->next_nl;
	sd->lineno++;
	sd->replaced = append ? sd->replaced : false;
	sed_fill_next(sd, !sd->separate);
	return true;
}

static bool
is_last(struct sed *sd)
{
	return !sd->have_next;
}

static bool
sed_re_match(struct sed *sd, regex_t *re, const char *s)
{
	if (re == NULL)
		re = sd->last_re;
	if (re == NULL) {
		tb_err(sd->io, "sed", "no previous regular expression");
		sd->quit = true;
		sd->rc = 1;
		return false;
	}
	sd->last_re = re;
	return regexec(re, s, 0, NULL, 0) == 0;
}

static bool
addr_match(struct sed *sd, struct sed_addr *a)
{
	switch (a->type) {
	case A_NONE: return true;
	case A_LINE: return sd->lineno == a->n;
	case A_LAST: return is_last(sd);
	case A_RE: return sed_re_match(sd, a->re, sd->ps.data);
	case A_STEP:
		return a->step <= 0 ? sd->lineno == a->n :
		    sd->lineno >= a->n && (sd->lineno - a->n) % a->step == 0;
	default: return false;
	}
}

static bool
cmd_match(struct sed *sd, struct sed_cmd *c)
{
	bool m;

	if (c->a1.type == A_NONE)
		m = true;
	else if (c->a2.type == A_NONE)
		m = addr_match(sd, &c->a1);
	else if (c->active) {
		m = true;
		switch (c->a2.type) {
		case A_LINE: c->active = sd->lineno < c->a2.n; break;
		case A_REL: c->active = sd->lineno < c->range_end; break;
		case A_MULT:
			c->active = c->a2.n > 0 && sd->lineno % c->a2.n != 0;
			break;
		case A_LAST: c->active = !is_last(sd); break;
		default: c->active = !addr_match(sd, &c->a2); break;
		}
	} else if ((m = addr_match(sd, &c->a1))) {
		c->active = true;
		if (c->a2.type == A_LINE && c->a2.n <= sd->lineno)
			c->active = false;
		else if (c->a2.type == A_REL) {
			c->range_end = sd->lineno + c->a2.n;
			c->active = c->a2.n > 0;
		} else if (c->a2.type == A_MULT)
			c->active = c->a2.n > 0 && sd->lineno % c->a2.n != 0;
		else if (c->a2.type == A_LAST)
			c->active = !is_last(sd);
	}
	return m != c->negate;
}

static void
put_ps(struct sed *sd, FILE *out, bool nl)
{
	fwrite(sd->ps.data, 1, sd->ps.len, out);
	if (nl)
		fputc('\n', out);
}

/* Appends the replacement for one match of s/// to out. */
static void
expand_repl(struct tb_buf *out, const char *repl, const char *base,
    const regmatch_t *m)
{
	int mode = 0, once = 0;	/* 'U', 'L' / 'u', 'l' */

	for (const char *r = repl; *r; r++) {
		const char *p = NULL;
		size_t n = 0;
		char ch;

		if (*r == '&') {
			p = base + m[0].rm_so;
			n = (size_t)(m[0].rm_eo - m[0].rm_so);
		} else if (*r == '\\' && r[1] != '\0') {
			r++;
			if (*r >= '0' && *r <= '9') {
				int g = *r - '0';

				if (m[g].rm_so >= 0) {
					p = base + m[g].rm_so;
					n = (size_t)(m[g].rm_eo - m[g].rm_so);
				}
			} else if (*r == 'U' || *r == 'L') {
				mode = *r;
				continue;
			} else if (*r == 'E') {
				mode = 0;
				continue;
			} else if (*r == 'u' || *r == 'l') {
				once = *r;
				continue;
			} else {
				ch = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r;
				p = &ch;
				n = 1;
			}
		} else {
			ch = *r;
			p = &ch;
			n = 1;
		}
		for (size_t k = 0; k < n; k++) {
			int c = (unsigned char)p[k];

			if (once) {
				c = once == 'u' ? toupper(c) : tolower(c);
				once = 0;
			} else if (mode)
				c = mode == 'U' ? toupper(c) : tolower(c);
			tb_buf_addc(out, c);
		}
	}
}

static bool
substitute(struct sed *sd, struct sed_cmd *c)
{
	regex_t *re = c->re ? c->re : sd->last_re;
	struct tb_buf out = { 0 };
	regmatch_t m[10];
	size_t pos = 0, len = sd->ps.len, prev_end = (size_t)-1;
	long count = 0;
	bool did = false;

	if (re == NULL) {
		tb_err(sd->io, "sed", "no previous regular expression");
		sd->quit = true;
		sd->rc = 1;
		return false;
	}
	sd->last_re = re;
	while (pos <= len && regexec(re, sd->ps.data + pos, 10, m,
	    pos > 0 ? REG_NOTBOL : 0) == 0) {
		size_t so = pos + (size_t)m[0].rm_so;
		size_t eo = pos + (size_t)m[0].rm_eo;

		if (so == eo && so == prev_end) {
			/* Empty match right after a match: skip a char. */
			if (so < len)
				tb_buf_addc(&out, sd->ps.data[so]);
			pos = so + 1;
			continue;
		}
		count++;
		tb_buf_add(&out, sd->ps.data + pos, so - pos);
		if (count >= (c->nth ? c->nth : 1)) {
			for (int g = 0; g < 10; g++)
				if (m[g].rm_so >= 0) {
					m[g].rm_so += (regoff_t)pos;
					m[g].rm_eo += (regoff_t)pos;
				}
			expand_repl(&out, c->repl, sd->ps.data, m);
			did = true;
		} else
			tb_buf_add(&out, sd->ps.data + so, eo - so);
		prev_end = eo;
		if (so == eo) {
			if (so < len)
				tb_buf_addc(&out, sd->ps.data[so]);
			pos = eo + 1;
		} else
			pos = eo;
		if (did && !c->global)
			break;
	}
	if (!did) {
		tb_buf_free(&out);
		return false;
	}
	if (pos < len)
		tb_buf_add(&out, sd->ps.data + pos, len - pos);
	tb_buf_free(&sd->ps);
	sd->ps = out;
	tb_buf_str(&sd->ps);
	return true;
}

static void
flush_append(struct sed *sd)
{
	if (sd->append.len > 0)
		fwrite(sd->append.data, 1, sd->append.len, sd->out);
	sd->append.len = 0;
}

static void
queue_file(struct sed *sd, const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t n;

	if (f == NULL)
		return;	/* r silently ignores unreadable files */
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		tb_buf_add(&sd->append, buf, n);
	fclose(f);
}

static void
print_escaped(struct sed *sd)
{
	FILE *out = sd->out;

	for (size_t i = 0; i < sd->ps.len; i++) {
		unsigned char c = (unsigned char)sd->ps.data[i];

		if (c == '\\')
			fputs("\\\\", out);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (isprint(c))
			fputc(c, out);
		else
			fprintf(out, "\\%03o", c);
	}
	fputs("$\n", out);
}

/* Runs the script on the pattern space; returns false to end input. */
static bool
run_cycle(struct sed *sd)
{
	struct sed_script *s = &sd->s;
	bool autoprint = !sd->quiet;
	int pc = 0;

	while (pc < s->n && !sd->quit) {
		struct sed_cmd *c = &s->cmds[pc];
		char *nl;

		if (c->cmd == '}' || c->cmd == ':') {
			pc++;
			continue;
		}
		if (!cmd_match(sd, c)) {
			pc = c->cmd == '{' ? c->jump + 1 : pc + 1;
			continue;
		}
		pc++;
		switch (c->cmd) {
		case '{':
			break;
		case '=':
			fprintf(sd->out, "%ld\n", sd->lineno);
			break;
		case 'a':
			tb_buf_adds(&sd->append, c->text);
			tb_buf_addc(&sd->append, '\n');
			break;
		case 'i':
			fprintf(sd->out, "%s\n", c->text);
			break;
		case 'c':
			if (c->a2.type == A_NONE || !c->active || c->negate)
				fprintf(sd->out, "%s\n", c->text);
			return true;
		case 'd':
			return true;
		case 'D':
			if ((nl = memchr(sd->ps.data, '\n', sd->ps.len)) == NULL)
				return true;
			sd->ps.len -= (size_t)(nl + 1 - sd->ps.data);
			memmove(sd->ps.data, nl + 1, sd->ps.len + 1);
			flush_append(sd);
			pc = 0;
			continue;
		case 'g':
			sd->ps.len = 0;
			tb_buf_add(&sd->ps, sd->hs.data, sd->hs.len);
			tb_buf_str(&sd->ps);
			break;
		case 'G':
			tb_buf_addc(&sd->ps, '\n');
			tb_buf_add(&sd->ps, sd->hs.data, sd->hs.len);
			tb_buf_str(&sd->ps);
			break;
		case 'h':
			sd->hs.len = 0;
			tb_buf_add(&sd->hs, sd->ps.data, sd->ps.len);
			break;
		case 'H':
			tb_buf_addc(&sd->hs, '\n');
			tb_buf_add(&sd->hs, sd->ps.data, sd->ps.len);
			break;
		case 'x': {
			struct tb_buf t = sd->ps;

			sd->ps = sd->hs;
			sd->hs = t;
			tb_buf_str(&sd->ps);
			break;
		}
		case 'l':
			print_escaped(sd);
			break;
		case 'n':
			if (is_last(sd)) {
				if (autoprint)
					put_ps(sd, sd->out, sd->ps_nl);
				flush_append(sd);
				return false;
			}
			if (autoprint)
				put_ps(sd, sd->out, true);
			flush_append(sd);
			read_line(sd, false);
			break;
		case 'N':
			if (is_last(sd)) {
				if (autoprint)
					put_ps(sd, sd->out, sd->ps_nl);
				flush_append(sd);
				return false;
			}
			flush_append(sd);
			read_line(sd, true);
			break;
		case 'p':
			put_ps(sd, sd->out, true);
			break;
		case 'P':
			nl = memchr(sd->ps.data, '\n', sd->ps.len);
			fwrite(sd->ps.data, 1, nl ? (size_t)(nl - sd->ps.data) :
			    sd->ps.len, sd->out);
			fputc('\n', sd->out);
			break;
		case 'q':
			if (autoprint)
				put_ps(sd, sd->out, sd->ps_nl || !is_last(sd));
			flush_append(sd);
			sd->rc = (int)c->code;
			sd->quit = true;
			return false;
		case 'Q':
			sd->rc = (int)c->code;
			sd->quit = true;
			return false;
		case 'r':
			queue_file(sd, c->text);
			break;
		case 'w':
			put_ps(sd, c->wfile, true);
			break;
		case 's':
			if (substitute(sd, c)) {
				sd->replaced = true;
				if (c->print)
					put_ps(sd, sd->out, true);
				if (c->wfile)
					put_ps(sd, c->wfile, true);
			}
			break;
		case 'y':
			for (size_t k = 0; k < sd->ps.len; k++)
				sd->ps.data[k] = (char)c->ymap[
				    (unsigned char)sd->ps.data[k]];
			break;
		case 'b':
			pc = c->jump;
			break;
		case 't':
		case 'T':
			if (sd->replaced == (c->cmd == 't'))
				pc = c->jump;
			sd->replaced = false;
			break;
		case 'z':
			sd->ps.len = 0;
			tb_buf_str(&sd->ps);
			break;
		case 'F':
			fprintf(sd->out, "%s\n", strcmp(sd->inname, "-") == 0 ?
			    "-" : sd->inname);
			break;
		}
	}
	if (autoprint && !sd->quit)
		put_ps(sd, sd->out, sd->ps_nl);
	return true;
}

/* Processes input until it ends (one file with -s/-i, else all). */
void
sed_run_stream(struct sed *sd)
{
	while (!sd->quit && read_line(sd, false)) {
		bool more = run_cycle(sd);

		flush_append(sd);
		if (!more)
			break;
	}
}

