/* tr.c - translate, squeeze and delete characters. */
#include "../toolbox.h"

#include <ctype.h>
#include <string.h>

struct cls {
	const char	*name;
	int		(*fn)(int);
};

static const struct cls classes[] = {
	{ "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank },
	{ "cntrl", iscntrl }, { "digit", isdigit }, { "graph", isgraph },
	{ "lower", islower }, { "print", isprint }, { "punct", ispunct },
	{ "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
};

/* One character of a set, with escapes; advances *sp. */
static int
set_char(const char **sp)
{
	const char *s = *sp;
	int c = (unsigned char)*s++;

	if (c == '\\' && *s) {
		c = (unsigned char)*s++;
		switch (c) {
		case 'n': c = '\n'; break;
		case 't': c = '\t'; break;
		case 'r': c = '\r'; break;
		case 'a': c = '\a'; break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'v': c = '\v'; break;
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0';

				for (int k = 0; k < 2 && *s >= '0' && *s <= '7';
				    k++)
					v = v * 8 + (*s++ - '0');
				c = v & 0xff;
			}
		}
	}
	*sp = s;
	return c;
}

/* Expands a set into out (up to 4096 chars); returns its length or -1. */
static int
expand_set(struct tb_io *io, const char *s, unsigned char *out)
{
	int n = 0;

	while (*s && n < 4000) {
		if (s[0] == '[' && s[1] == ':') {
			const char *end = strstr(s + 2, ":]");
			size_t k;

			for (k = 0; end && k < sizeof(classes) /
			    sizeof(classes[0]); k++)
				if (strlen(classes[k].name) == (size_t)(end -
				    s - 2) && strncmp(s + 2, classes[k].name,
				    (size_t)(end - s - 2)) == 0)
					break;
			if (end == NULL || k == sizeof(classes) /
			    sizeof(classes[0])) {
				tb_err(io, "tr", "invalid character class");
				return -1;
			}
			for (int c = 0; c < 256; c++)
				if (classes[k].fn(c))
					out[n++] = (unsigned char)c;
			s = end + 2;
			continue;
		}
		int c = set_char(&s);

		if (s[0] == '-' && s[1] != '\0') {
			int hi;

			s++;
			hi = set_char(&s);
			if (hi < c) {
				tb_err(io, "tr", "range-endpoints of '%c-%c' "
				    "are in reverse collating sequence order",
				    c, hi);
				return -1;
			}
			for (; c <= hi; c++)
				out[n++] = (unsigned char)c;
			continue;
		}
		out[n++] = (unsigned char)c;
	}
	return n;
}

int
applet_tr(struct tb_io *io, int argc, char **argv)
{
	unsigned char s1[4352], s2[4352], map[256];
	bool in1[256] = { false }, in2[256] = { false };
	bool del = false, squeeze = false, comp = false;
	struct tb_opt o;
	int c, n1, n2 = 0, last = -1;

	tb_opt_init(&o, io, "tr", argc, argv);
	while ((c = tb_opt_next(&o, "dscCt")) != TB_OPT_END) {
		if (c == 'd')
			del = true;
		else if (c == 's')
			squeeze = true;
		else if (c == 'c' || c == 'C')
			comp = true;
		else if (c != 't')
			return 1;
	}
	if (o.ind >= argc || (!del && !squeeze && o.ind + 1 >= argc)) {
		tb_err(io, "tr", "missing operand");
		return 1;
	}
	if ((n1 = expand_set(io, argv[o.ind], s1)) < 0)
		return 1;
	if (o.ind + 1 < argc && (n2 = expand_set(io, argv[o.ind + 1], s2)) < 0)
		return 1;
	for (int i = 0; i < n1; i++)
		in1[s1[i]] = true;
	if (comp) {
		n1 = 0;
		for (int k = 0; k < 256; k++) {
			in1[k] = !in1[k];
			if (in1[k])
				s1[n1++] = (unsigned char)k;
		}
	}
	for (int k = 0; k < 256; k++)
		map[k] = (unsigned char)k;
	if (!del && n2 > 0) {
		for (int i = 0; i < n1; i++)
			map[s1[i]] = s2[i < n2 ? i : n2 - 1];
	}
	/* The squeeze set: set2 when translating or deleting, else set1. */
	if (squeeze) {
		if ((del || n2 > 0) && o.ind + 1 < argc)
			for (int i = 0; i < n2; i++)
				in2[s2[i]] = true;
		else
			memcpy(in2, in1, sizeof(in2));
	}
	while ((c = getc(io->in)) != EOF) {
		if (del && in1[c])
			continue;
		if (!del)
			c = map[c];
		if (squeeze && in2[c] && c == last)
			continue;
		last = c;
		putc(c, io->out);
	}
	return 0;
}
