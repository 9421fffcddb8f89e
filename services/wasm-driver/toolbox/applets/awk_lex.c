/* awk_lex.c - the awk tokenizer and the program's arena. */
#include "awk.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct arena_chunk {
	struct arena_chunk	*next;
	size_t			 used, cap;
	max_align_t		 data[];
};

void *
awk_alloc(struct awk *a, size_t n)
{
	struct arena_chunk *c = a->arena;

	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) *
	    sizeof(max_align_t);
	if (c == NULL || c->used + n > c->cap) {
		size_t cap = n > 16384 ? n : 16384;

		c = tb_xmalloc(sizeof(*c) + cap);
		c->next = a->arena;
		c->used = 0;
		c->cap = cap;
		a->arena = c;
	}
	c->used += n;
	return memset((char *)c->data + c->used - n, 0, n);
}

char *
awk_strdup(struct awk *a, const char *s, size_t n)
{
	char *p = awk_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
awk_arena_free(struct awk *a)
{
	while (a->arena != NULL) {
		struct arena_chunk *c = a->arena;

		a->arena = c->next;
		free(c);
	}
}

static const struct {
	const char	*name;
	int		 type, sub;
} words[] = {
	{ "BEGIN", T_BEGIN, 0 }, { "END", T_END, 0 },
	{ "function", T_FUNCTION, 0 }, { "func", T_FUNCTION, 0 },
	{ "if", T_IF, 0 }, { "else", T_ELSE, 0 }, { "while", T_WHILE, 0 },
	{ "for", T_FOR, 0 }, { "do", T_DO, 0 }, { "break", T_BREAK, 0 },
	{ "continue", T_CONTINUE, 0 }, { "next", T_NEXT, 0 },
	{ "nextfile", T_NEXTFILE, 0 }, { "exit", T_EXIT, 0 },
	{ "return", T_RETURN, 0 }, { "delete", T_DELETE, 0 },
	{ "getline", T_GETLINE, 0 }, { "print", T_PRINT, 0 },
	{ "printf", T_PRINTF, 0 }, { "in", T_IN, 0 },
	{ "length", T_BUILTIN, B_LENGTH }, { "substr", T_BUILTIN, B_SUBSTR },
	{ "index", T_BUILTIN, B_INDEX }, { "split", T_BUILTIN, B_SPLIT },
	{ "sub", T_BUILTIN, B_SUB }, { "gsub", T_BUILTIN, B_GSUB },
	{ "match", T_BUILTIN, B_MATCH }, { "sprintf", T_BUILTIN, B_SPRINTF },
	{ "sin", T_BUILTIN, B_SIN }, { "cos", T_BUILTIN, B_COS },
	{ "atan2", T_BUILTIN, B_ATAN2 }, { "exp", T_BUILTIN, B_EXP },
	{ "log", T_BUILTIN, B_LOG }, { "sqrt", T_BUILTIN, B_SQRT },
	{ "int", T_BUILTIN, B_INT }, { "rand", T_BUILTIN, B_RAND },
	{ "srand", T_BUILTIN, B_SRAND }, { "tolower", T_BUILTIN, B_TOLOWER },
	{ "toupper", T_BUILTIN, B_TOUPPER }, { "system", T_BUILTIN, B_SYSTEM },
	{ "close", T_BUILTIN, B_CLOSE }, { "fflush", T_BUILTIN, B_FFLUSH },
};

static const struct {
	const char	*op;
	int		 type;
} ops[] = {
	{ "+=", T_ADD_ASSIGN }, { "-=", T_SUB_ASSIGN }, { "*=", T_MUL_ASSIGN },
	{ "/=", T_DIV_ASSIGN }, { "%=", T_MOD_ASSIGN }, { "^=", T_POW_ASSIGN },
	{ "**=", T_POW_ASSIGN }, { "++", T_INCR }, { "--", T_DECR },
	{ "**", T_POW }, { "&&", T_AND }, { "||", T_OR }, { "==", T_EQ },
	{ "!=", T_NE }, { "<=", T_LE }, { ">=", T_GE }, { "!~", T_NOMATCH },
	{ ">>", T_APPEND },
};

static struct atok *
push(struct awk *a, int type, int line)
{
	struct atok *t;

	if (a->ntoks % 256 == 0)
		a->toks = tb_xrealloc(a->toks, sizeof(*t) *
		    (size_t)(a->ntoks + 256));
	t = &a->toks[a->ntoks++];
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->line = line;
	return t;
}

/* Can the previous token end an operand (then '/' is division)? */
static bool
ends_operand(struct awk *a)
{
	int t = a->ntoks > 0 ? a->toks[a->ntoks - 1].type : T_NEWLINE;

	return t == T_NUMBER || t == T_STRING || t == T_ERE || t == T_NAME ||
	    t == T_BUILTIN || t == ')' || t == ']' || t == '$' ||
	    t == T_INCR || t == T_DECR;
}

static int
lex_error(struct awk *a, int line, const char *msg)
{
	tb_err(a->io, "awk", "line %d: %s", line, msg);
	return -1;
}

static const char *
lex_string(struct awk *a, const char *p, int line)
{
	struct tb_buf b = { 0 };
	struct atok *t;

	for (p++; *p != '"'; p++) {
		if (*p == '\0' || *p == '\n') {
			tb_buf_free(&b);
			lex_error(a, line, "unterminated string");
			return NULL;
		}
		if (*p != '\\') {
			tb_buf_addc(&b, *p);
			continue;
		}
		switch (*++p) {
		case 'n': tb_buf_addc(&b, '\n'); break;
		case 't': tb_buf_addc(&b, '\t'); break;
		case 'r': tb_buf_addc(&b, '\r'); break;
		case '\\': tb_buf_addc(&b, '\\'); break;
		case '"': tb_buf_addc(&b, '"'); break;
		case '/': tb_buf_addc(&b, '/'); break;
		case 'a': tb_buf_addc(&b, '\a'); break;
		case 'b': tb_buf_addc(&b, '\b'); break;
		case 'f': tb_buf_addc(&b, '\f'); break;
		case 'v': tb_buf_addc(&b, '\v'); break;
		case '\n': break;
		case '\0': p--; break;
		default:
			if (*p >= '0' && *p <= '7') {
				int v = 0;

				for (int k = 0; k < 3 && *p >= '0' && *p <= '7';
				    k++)
					v = v * 8 + (*p++ - '0');
				p--;
				tb_buf_addc(&b, v);
			} else {
				/* Keep unknown escapes for regex use. */
				tb_buf_addc(&b, '\\');
				tb_buf_addc(&b, *p);
			}
		}
	}
	t = push(a, T_STRING, line);
	t->s = awk_strdup(a, b.data ? b.data : "", b.len);
	tb_buf_free(&b);
	return p + 1;
}

static const char *
lex_regex(struct awk *a, const char *p, int line)
{
	struct tb_buf b = { 0 };
	bool bracket = false;
	struct atok *t;

	for (p++; bracket || *p != '/'; p++) {
		if (*p == '\0' || *p == '\n') {
			tb_buf_free(&b);
			lex_error(a, line, "unterminated regular expression");
			return NULL;
		}
		if (*p == '\\' && p[1] == '/') {
			tb_buf_addc(&b, '/');
			p++;
			continue;
		}
		if (*p == '\\' && p[1] != '\0') {
			tb_buf_addc(&b, *p++);
			tb_buf_addc(&b, *p);
			continue;
		}
		if (*p == '[' && !bracket) {
			bracket = true;
			tb_buf_addc(&b, *p);
			if (p[1] == '^')
				tb_buf_addc(&b, *++p);
			if (p[1] == ']')
				tb_buf_addc(&b, *++p);
			continue;
		}
		if (*p == ']')
			bracket = false;
		tb_buf_addc(&b, *p);
	}
	t = push(a, T_ERE, line);
	t->s = awk_strdup(a, b.data ? b.data : "", b.len);
	tb_buf_free(&b);
	return p + 1;
}

int
awk_lex(struct awk *a, const char *p)
{
	int line = 1;

	while (*p) {
		const char *s = p;

		if (*p == ' ' || *p == '\t' || *p == '\r') {
			p++;
			continue;
		}
		if (*p == '\\' && (p[1] == '\n' || (p[1] == '\r' &&
		    p[2] == '\n'))) {
			p += p[1] == '\n' ? 2 : 3;
			line++;
			continue;
		}
		if (*p == '#') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		if (*p == '\n') {
			int prev = a->ntoks ? a->toks[a->ntoks - 1].type : 0;

			line++;
			p++;
			/* Newlines after these tokens are not terminators. */
			if (prev == '{' || prev == T_AND || prev == T_OR ||
			    prev == ',' || prev == T_DO || prev == T_ELSE ||
			    prev == T_NEWLINE || a->ntoks == 0)
				continue;
			push(a, T_NEWLINE, line - 1);
			continue;
		}
		if (*p == '"') {
			if ((p = lex_string(a, p, line)) == NULL)
				return -1;
			continue;
		}
		if (*p == '/' && !ends_operand(a)) {
			if ((p = lex_regex(a, p, line)) == NULL)
				return -1;
			continue;
		}
		if (isdigit((unsigned char)*p) || (*p == '.' &&
		    isdigit((unsigned char)p[1]))) {
			char *end;
			struct atok *t = push(a, T_NUMBER, line);

			if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
			    isxdigit((unsigned char)p[2]))
				t->num = (double)strtoull(p, &end, 16);
			else
				t->num = strtod(p, &end);
			p = end;
			continue;
		}
		if (isalpha((unsigned char)*p) || *p == '_') {
			struct atok *t;
			size_t n;

			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			n = (size_t)(p - s);
			for (size_t k = 0; k < sizeof(words) / sizeof(words[0]);
			    k++)
				if (strlen(words[k].name) == n &&
				    strncmp(words[k].name, s, n) == 0) {
					t = push(a, words[k].type, line);
					t->sub = words[k].sub;
					t->s = awk_strdup(a, s, n);
					goto next;
				}
			t = push(a, *p == '(' ? T_FUNCNAME : T_NAME, line);
			t->s = awk_strdup(a, s, n);
			continue;
		}
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
			size_t n = strlen(ops[k].op);

			if (strncmp(p, ops[k].op, n) == 0) {
				push(a, ops[k].type, line);
				p += n;
				goto next;
			}
		}
		if (strchr("{}()[];,+-*/%!><|?:$=^~", *p) == NULL) {
			char msg[64];

			snprintf(msg, sizeof(msg), "unexpected character '%c'",
			    *p);
			return lex_error(a, line, msg);
		}
		push(a, (unsigned char)*p++, line);
		continue;
next:
		;
	}
	push(a, T_NEWLINE, line);
	push(a, T_EOF, line);
	return 0;
}
