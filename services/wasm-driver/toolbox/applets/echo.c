/* echo.c - echo and printf. */
#include "../toolbox.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Writes the escape sequence at *sp (just past the backslash) and advances
 * *sp. Returns 1 after "\c" (stop all output), else 0. In octal_b mode
 * ("%b", echo -e) octal is "\0nnn"; otherwise "\nnn".
 */
static int
put_escape(FILE *out, const char **sp, bool octal_b)
{
	const char *s = *sp;
	int c = (unsigned char)*s++, v, k;

	switch (c) {
	case 'a': c = '\a'; break;
	case 'b': c = '\b'; break;
	case 'e': c = 033; break;
	case 'f': c = '\f'; break;
	case 'n': c = '\n'; break;
	case 'r': c = '\r'; break;
	case 't': c = '\t'; break;
	case 'v': c = '\v'; break;
	case '\\': break;
	case 'c':
		*sp = s;
		return 1;
	case 'x':
		for (v = 0, k = 0; k < 2 && isxdigit((unsigned char)*s); k++, s++)
			v = v * 16 + (isdigit((unsigned char)*s) ? *s - '0' :
			    (tolower((unsigned char)*s) - 'a' + 10));
		if (k == 0) {
			fputs("\\x", out);
			*sp = s;
			return 0;
		}
		c = v;
		break;
	case '0': case '1': case '2': case '3':
	case '4': case '5': case '6': case '7':
		if (octal_b && c != '0') {
			fputc('\\', out);
			break;
		}
		s--;
		if (octal_b)
			s++;
		for (v = 0, k = 0; k < 3 && *s >= '0' && *s <= '7'; k++, s++)
			v = v * 8 + (*s - '0');
		c = v & 0xff;
		break;
	case '\0':
		fputc('\\', out);
		*sp = s - 1;
		return 0;
	default:
		fputc('\\', out);
		break;
	}
	fputc(c, out);
	*sp = s;
	return 0;
}

int
applet_echo(struct tb_io *io, int argc, char **argv)
{
	bool nl = true, esc = false;
	int i = 1;

	for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		const char *p = argv[i] + 1;

		if (strspn(p, "neE") != strlen(p))
			break;
		for (; *p; p++) {
			if (*p == 'n')
				nl = false;
			else
				esc = *p == 'e';
		}
	}
	for (int first = i; i < argc; i++) {
		const char *s = argv[i];

		if (i > first)
			fputc(' ', io->out);
		if (!esc) {
			fputs(s, io->out);
			continue;
		}
		while (*s) {
			if (*s != '\\') {
				fputc(*s++, io->out);
				continue;
			}
			s++;
			if (put_escape(io->out, &s, true))
				return 0;
		}
	}
	if (nl)
		fputc('\n', io->out);
	return 0;
}

struct pf {
	struct tb_io	*io;
	int		 rc;
};

static long long
pf_int(struct pf *p, const char *s)
{
	char *end;
	long long v;

	if (s[0] == '\'' || s[0] == '"')
		return (unsigned char)s[1];
	if (*s == '\0')
		return 0;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno != 0 || *end != '\0') {
		tb_err(p->io, "printf", "invalid number '%s'", s);
		p->rc = 1;
	}
	return v;
}

static double
pf_float(struct pf *p, const char *s)
{
	char *end;
	double v;

	if (s[0] == '\'' || s[0] == '"')
		return (unsigned char)s[1];
	v = strtod(s, &end);
	if (*s != '\0' && *end != '\0') {
		tb_err(p->io, "printf", "invalid number '%s'", s);
		p->rc = 1;
	}
	return v;
}

/*
 * Formats one pass of fmt, consuming arguments from *argv. Returns 1 when
 * "\c" stopped output.
 */
static int
pf_pass(struct pf *p, const char *fmt, char ***argv, int *argc)
{
	FILE *out = p->io->out;
	const char *s = fmt;

	while (*s) {
		char spec[64], conv;
		size_t n = 0;
		const char *arg;
		int star[2], nstar = 0;

		if (*s == '\\') {
			s++;
			if (put_escape(out, &s, false))
				return 1;
			continue;
		}
		if (*s != '%') {
			fputc(*s++, out);
			continue;
		}
		if (s[1] == '%') {
			fputc('%', out);
			s += 2;
			continue;
		}
		spec[n++] = *s++;
		while (*s && strchr("-+ #0", *s) && n < 40)
			spec[n++] = *s++;
		for (int part = 0; part < 2; part++) {
			if (part == 1) {
				if (*s != '.')
					break;
				spec[n++] = *s++;
			}
			if (*s == '*') {
				arg = *argc > 0 ? ((*argc)--, *(*argv)++) : "0";
				star[nstar++] = (int)pf_int(p, arg);
				spec[n++] = *s++;
			} else {
				while (isdigit((unsigned char)*s) && n < 50)
					spec[n++] = *s++;
			}
		}
		while (*s && strchr("hlLqjzt", *s))
			s++;
		conv = *s;
		if (conv == '\0' || strchr("diouxXcsbeEfFgGaA", conv) == NULL) {
			tb_err(p->io, "printf", "%%%c: invalid directive",
			    conv ? conv : ' ');
			p->rc = 1;
			return 1;
		}
		s++;
		arg = *argc > 0 ? ((*argc)--, *(*argv)++) : NULL;
		if (strchr("diouxX", conv) != NULL) {
			spec[n++] = 'l';
			spec[n++] = 'l';
		}
		spec[n++] = conv == 'b' ? 's' : conv;
		spec[n] = '\0';
#define PF(v) (nstar == 2 ? fprintf(out, spec, star[0], star[1], v) : \
    nstar == 1 ? fprintf(out, spec, star[0], v) : fprintf(out, spec, v))
		switch (conv) {
		case 'd':
		case 'i':
			PF(pf_int(p, arg ? arg : "0"));
			break;
		case 'o': case 'u': case 'x': case 'X':
			PF((unsigned long long)pf_int(p, arg ? arg : "0"));
			break;
		case 'c':
			PF(arg && *arg ? (int)(unsigned char)arg[0] : 0);
			break;
		case 's':
			PF(arg ? arg : "");
			break;
		case 'b': {
			struct tb_buf b = { 0 };
			struct tb_mem m = { 0 };
			FILE *mf = tb_mem_writer(&m);
			const char *q = arg ? arg : "";
			int stop = 0;

			while (mf != NULL && *q && !stop) {
				if (*q != '\\')
					fputc(*q++, mf);
				else {
					q++;
					stop = put_escape(mf, &q, true);
				}
			}
			if (mf != NULL)
				fclose(mf);
			tb_buf_add(&b, m.data, m.len);
			PF(tb_buf_str(&b));
			tb_buf_free(&b);
			tb_mem_free(&m);
			if (stop)
				return 1;
			break;
		}
		default:
			PF(pf_float(p, arg ? arg : "0"));
			break;
		}
#undef PF
	}
	return 0;
}

int
applet_printf(struct tb_io *io, int argc, char **argv)
{
	struct pf p = { io, 0 };
	char **args;
	int nargs;

	if (argc > 1 && strcmp(argv[1], "--") == 0) {
		argc--;
		argv++;
	}
	if (argc < 2) {
		tb_err(io, "printf", "missing operand");
		return 1;
	}
	args = argv + 2;
	nargs = argc - 2;
	do {
		int before = nargs;

		if (pf_pass(&p, argv[1], &args, &nargs))
			break;
		if (nargs == before)
			break;
	} while (nargs > 0);
	return p.rc;
}
