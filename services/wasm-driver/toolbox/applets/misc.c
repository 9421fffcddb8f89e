/*
 * misc.c - small applets: true, false, pwd, sleep, basename, dirname, yes,
 * nproc, env, seq, date, time, uname.
 */
#include "../toolbox.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifndef __wasi__
#include <sys/utsname.h>
#endif

extern char **environ;

int
applet_true(struct tb_io *io, int argc, char **argv)
{
	(void)io, (void)argc, (void)argv;
	return 0;
}

int
applet_false(struct tb_io *io, int argc, char **argv)
{
	(void)io, (void)argc, (void)argv;
	return 1;
}

int
applet_pwd(struct tb_io *io, int argc, char **argv)
{
	char buf[PATH_MAX];

	(void)argc, (void)argv;
	if (getcwd(buf, sizeof(buf)) == NULL) {
		tb_errno(io, "pwd", "getcwd");
		return 1;
	}
	fprintf(io->out, "%s\n", buf);
	return 0;
}

/* Parses "1.5", "2s", "3m", "1h", "1d" into seconds. */
static int
parse_duration(const char *s, double *secp)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v < 0 || isnan(v))
		return -1;
	switch (*end) {
	case '\0':
	case 's':
		break;
	case 'm':
		v *= 60;
		break;
	case 'h':
		v *= 3600;
		break;
	case 'd':
		v *= 86400;
		break;
	default:
		return -1;
	}
	if (*end != '\0' && end[1] != '\0')
		return -1;
	*secp = v;
	return 0;
}

int
applet_sleep(struct tb_io *io, int argc, char **argv)
{
	double total = 0, v;
	struct timespec ts;

	if (argc < 2) {
		tb_err(io, "sleep", "missing operand");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		if (parse_duration(argv[i], &v) != 0) {
			tb_err(io, "sleep", "invalid time interval '%s'",
			    argv[i]);
			return 1;
		}
		total += v;
	}
	if (total > 1e9)
		total = 1e9;
	ts.tv_sec = (time_t)total;
	ts.tv_nsec = (long)((total - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return 0;
}

int
applet_basename(struct tb_io *io, int argc, char **argv)
{
	const char *b;
	size_t n, sl;

	if (argc < 2) {
		tb_err(io, "basename", "missing operand");
		return 1;
	}
	b = tb_basename(argv[1]);
	n = strcspn(b, "/");
	if (b[0] == '/')
		n = 1;
	if (argc > 2 && (sl = strlen(argv[2])) < n &&
	    strncmp(b + n - sl, argv[2], sl) == 0)
		n -= sl;
	fprintf(io->out, "%.*s\n", (int)n, b);
	return 0;
}

int
applet_dirname(struct tb_io *io, int argc, char **argv)
{
	const char *p;
	size_t n;

	if (argc < 2) {
		tb_err(io, "dirname", "missing operand");
		return 1;
	}
	p = argv[1];
	n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	while (n > 0 && p[n - 1] != '/')
		n--;
	if (n == 0) {
		fputs(".\n", io->out);
		return 0;
	}
	while (n > 1 && p[n - 1] == '/')
		n--;
	fprintf(io->out, "%.*s\n", (int)n, p);
	return 0;
}

/*
 * Pipe stages run one after another, so yes cannot wait for its reader:
 * it writes until its output refuses more (a pipe stage holds at most
 * TB_MEM_LIMIT bytes) or YES_MAX bytes, whichever comes first, in blocks.
 */
#define YES_MAX		((size_t)TB_MEM_LIMIT)
#define YES_BLOCK	8192

int
applet_yes(struct tb_io *io, int argc, char **argv)
{
	struct tb_buf line = { 0 }, block = { 0 };
	size_t written = 0;

	for (int i = 1; i < argc; i++) {
		if (i > 1)
			tb_buf_addc(&line, ' ');
		tb_buf_adds(&line, argv[i]);
	}
	if (argc < 2)
		tb_buf_addc(&line, 'y');
	tb_buf_addc(&line, '\n');
	do
		tb_buf_add(&block, line.data, line.len);
	while (block.len + line.len <= YES_BLOCK);
	while (written < YES_MAX) {
		size_t n = block.len;

		if (n > YES_MAX - written)
			n = YES_MAX - written;
		if (fwrite(block.data, 1, n, io->out) != n)
			break;
		written += n;
	}
	tb_buf_free(&block);
	tb_buf_free(&line);
	return 0;
}

int
applet_nproc(struct tb_io *io, int argc, char **argv)
{
	long n = 1;

	(void)argc, (void)argv;
#ifdef _SC_NPROCESSORS_ONLN
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
#endif
	fprintf(io->out, "%ld\n", n);
	return 0;
}

int
applet_env(struct tb_io *io, int argc, char **argv)
{
	struct tb_buf saved = { 0 };	/* char *name, char *old pairs */
	char **pairs;
	size_t npairs;
	int i = 1, rc = 0;

	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	for (; i < argc && strchr(argv[i], '=') != NULL &&
	    argv[i][0] != '='; i++) {
		char *eq = strchr(argv[i], '=');
		char *name = tb_xstrdup(argv[i]);
		const char *old;
		char *keep[2];

		name[eq - argv[i]] = '\0';
		old = getenv(name);
		keep[0] = name;
		keep[1] = old ? tb_xstrdup(old) : NULL;
		tb_buf_add(&saved, keep, sizeof(keep));
		setenv(name, eq + 1, 1);
	}
	if (i >= argc) {
		for (char **e = environ; *e != NULL; e++)
			fprintf(io->out, "%s\n", *e);
	} else if ((rc = tb_applet_run(io, argc - i, argv + i)) < 0) {
		tb_err(io, "env", "'%s': No such file or directory", argv[i]);
		rc = 127;
	}
	pairs = (char **)saved.data;
	npairs = saved.len / sizeof(char *);
	for (size_t k = npairs; k >= 2; k -= 2) {
		if (pairs[k - 1] != NULL)
			setenv(pairs[k - 2], pairs[k - 1], 1);
		else
			unsetenv(pairs[k - 2]);
		free(pairs[k - 2]);
		free(pairs[k - 1]);
	}
	tb_buf_free(&saved);
	return rc;
}

/* Decimal places written in s (for seq). */
static int
decimals(const char *s)
{
	const char *d = strchr(s, '.');

	return d ? (int)strcspn(d + 1, "eE") : 0;
}

int
applet_seq(struct tb_io *io, int argc, char **argv)
{
	const char *sep = "\n";
	double v[3] = { 1, 1, 0 };
	int i = 1, n, prec = 0, width = 0;
	bool pad = false, expo = false;
	char *end;

	while (i < argc && argv[i][0] == '-' && argv[i][1] != '\0' &&
	    strchr("0123456789.", argv[i][1]) == NULL) {
		if (strcmp(argv[i], "-w") == 0)
			pad = true;
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			sep = argv[++i];
		else if (strncmp(argv[i], "-s", 2) == 0)
			sep = argv[i] + 2;
		else {
			tb_err(io, "seq", "invalid option '%s'", argv[i]);
			return 1;
		}
		i++;
	}
	n = argc - i;
	if (n < 1 || n > 3) {
		tb_err(io, "seq", n < 1 ? "missing operand" : "extra operand");
		return 1;
	}
	for (int k = 0; k < n; k++) {
		double d = strtod(argv[i + k], &end);

		if (*end != '\0' || end == argv[i + k] || isnan(d)) {
			tb_err(io, "seq", "invalid floating point argument: "
			    "'%s'", argv[i + k]);
			return 1;
		}
		if (n == 1)
			v[2] = d;
		else if (n == 2)
			v[k == 0 ? 0 : 2] = d;
		else
			v[k] = d;
		if (strpbrk(argv[i + k], "eE") != NULL)
			expo = true;
		if (k < n - 1 || n == 1) {
			int dp = decimals(argv[i + k]);

			prec = dp > prec ? dp : prec;
		}
	}
	if (v[1] == 0) {
		tb_err(io, "seq", "invalid Zero increment value: '0'");
		return 1;
	}
	if (pad) {
		char b1[64], b2[64];
		int l1 = snprintf(b1, sizeof(b1), "%.*f", prec, v[0]);
		int l2 = snprintf(b2, sizeof(b2), "%.*f", prec, v[2]);

		width = l1 > l2 ? l1 : l2;
	}
	/* A count, not a float comparison: 1e300 + 1 == 1e300. */
	double count = floor((v[2] - v[0]) / v[1] + 1e-9) + 1;

	for (long long k = 0; (double)k < count; k++) {
		double x = v[0] + (double)k * v[1];

		if (k > 0)
			fputs(sep, io->out);
		if (expo)
			fprintf(io->out, "%g", x);
		else
			fprintf(io->out, pad ? "%0*.*f" : "%*.*f", width, prec,
			    x);
		if (ferror(io->out))
			return 1;
	}
	if (count >= 1)
		fputc('\n', io->out);
	return 0;
}

int
applet_date(struct tb_io *io, int argc, char **argv)
{
	const char *fmt = "%a %b %e %H:%M:%S %Z %Y";
	time_t t = time(NULL);
	struct tm tm;
	char buf[512];
	bool utc = false;
	struct tb_opt o;
	long long ll;
	int c;

	tb_opt_init(&o, io, "date", argc, argv);
	while ((c = tb_opt_next(&o, "uId:R")) != TB_OPT_END) {
		switch (c) {
		case 'u':
			utc = true;
			break;
		case 'I':
			fmt = "%Y-%m-%d";
			break;
		case 'R':
			fmt = "%a, %d %b %Y %H:%M:%S %z";
			break;
		case 'd':
			if (o.arg[0] != '@' || tb_parse_ll(o.arg + 1, &ll)) {
				tb_err(io, "date", "invalid date '%s'", o.arg);
				return 1;
			}
			t = (time_t)ll;
			break;
		default:
			return 1;
		}
	}
	if (o.ind < argc && argv[o.ind][0] == '+')
		fmt = argv[o.ind] + 1;
	else if (o.ind < argc) {
		tb_err(io, "date", "setting the date is not supported");
		return 1;
	}
	if (utc)
		gmtime_r(&t, &tm);
	else
		localtime_r(&t, &tm);
	buf[0] = '\0';
	if (strftime(buf, sizeof(buf), fmt, &tm) == 0 && fmt[0] != '\0') {
		tb_err(io, "date", "format too long");
		return 1;
	}
	fprintf(io->out, "%s\n", buf);
	return 0;
}

int
applet_time(struct tb_io *io, int argc, char **argv)
{
	struct timespec a, b;
	double real;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (argc > 1 && (rc = tb_applet_run(io, argc - 1, argv + 1)) < 0) {
		tb_err(io, "time", "can't execute '%s': No such file or "
		    "directory", argv[1]);
		rc = 127;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	real = (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	fflush(io->out);
	fprintf(io->err, "real\t%dm%.3fs\nuser\t0m0.000s\nsys\t0m0.000s\n",
	    (int)(real / 60), fmod(real, 60));
	return rc;
}

int
applet_uname(struct tb_io *io, int argc, char **argv)
{
	const char *f[5] = { "WASI", "sandbox", "preview1", "toolbox",
		"wasm32" };	/* sysname nodename release version machine */
	bool show[5] = { false };
	struct tb_opt o;
	bool any = false, first = true;
	int c;
#ifndef __wasi__
	struct utsname u;

	if (uname(&u) == 0) {
		f[0] = u.sysname;
		f[1] = u.nodename;
		f[2] = u.release;
		f[3] = u.version;
		f[4] = u.machine;
	}
#endif
	tb_opt_init(&o, io, "uname", argc, argv);
	while ((c = tb_opt_next(&o, "asnrvmpio")) != TB_OPT_END) {
		const char *k = strchr("snrvm", c);

		if (c == 'a')
			for (int i = 0; i < 5; i++)
				show[i] = true;
		else if (k != NULL)
			show[k - "snrvm"] = true;
		else if (c != 'p' && c != 'i' && c != 'o')
			return 1;
		any = true;
	}
	if (!any)
		show[0] = true;
	for (int i = 0; i < 5; i++) {
		if (!show[i])
			continue;
		fprintf(io->out, first ? "%s" : " %s", f[i]);
		first = false;
	}
	fputc('\n', io->out);
	return 0;
}
