/* sed_main.c - the sed applet: options, scripts, in-place editing. */
#include "sed.h"

#include <stdlib.h>
#include <string.h>

static int
sed_inplace(struct sed *sd)
{
	for (int i = 0; i < sd->nfiles && !sd->quit; i++) {
		struct tb_mem m = { .limit = (size_t)1 << 30 };
		FILE *f;

		sd->in = tb_open_in(sd->io, "sed", sd->files[i]);
		if (sd->in == NULL || sd->in == sd->io->in) {
			if (sd->in == NULL)
				sd->rc = 4;
			sd->in = NULL;
			continue;
		}
		sd->inname = sd->files[i];
		if ((sd->out = tb_mem_writer(&m)) == NULL)
			return 4;
		sd->lineno = 0;
		sed_fill_next(sd, false);
		sed_run_stream(sd);
		fclose(sd->out);
		if (sd->in != NULL)
			tb_close_in(sd->io, sd->in);
		sd->in = NULL;
		if ((f = fopen(sd->files[i], "w")) == NULL) {
			tb_errno(sd->io, "sed", sd->files[i]);
			sd->rc = 4;
		} else {
			if (m.len > 0)
				fwrite(m.data, 1, m.len, f);
			if (fclose(f) != 0)
				sd->rc = 4;
		}
		tb_mem_free(&m);
	}
	sd->out = sd->io->out;
	return sd->rc;
}

/* "-i" may carry a backup suffix glued on ("-i.bak"). */
static bool
inplace_arg(const char *a, const char **suffix)
{
	if (a[0] == '-' && a[1] == 'i' && a[2] != '\0') {
		/* "-in" is -i -n, "-i.bak" a suffix. */
		for (const char *p = a + 2; *p != '\0'; p++)
			if (strchr("nEsru", *p) == NULL) {
				*suffix = a + 2;
				return true;
			}
		return false;
	}
	if (strncmp(a, "--in-place", 10) == 0 && (a[10] == '\0' ||
	    a[10] == '=')) {
		*suffix = a[10] == '=' ? a + 11 : "";
		return true;
	}
	return false;
}

static int
add_script_file(struct sed *sd, struct tb_buf *script, const char *path)
{
	FILE *f = tb_open_in(sd->io, "sed", path);
	char buf[4096];
	size_t n;

	if (f == NULL)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		tb_buf_add(script, buf, n);
	tb_close_in(sd->io, f);
	if (script->len > 0 && script->data[script->len - 1] == '\n')
		script->len--;
	tb_buf_addc(script, '\n');
	return 0;
}

int
applet_sed(struct tb_io *io, int argc, char **argv)
{
	struct sed sd = { .io = io, .out = io->out };
	struct tb_buf script = { 0 };
	struct tb_opt o;
	const char *suffix = NULL;
	char *suffix_copy = NULL;
	bool have_script = false;
	int c, rc = 1;

	/* The argument becomes "-i" in place: argv's strings are the
	 * caller's (the shell frees them), so no pointer is swapped in. */
	for (int i = 1; i < argc; i++)
		if (inplace_arg(argv[i], &suffix)) {
			free(suffix_copy);
			suffix = suffix_copy = tb_xstrdup(suffix);
			strcpy(argv[i], "-i");
		}
	tb_opt_init(&o, io, "sed", argc, argv);
	while ((c = tb_opt_next(&o, "ne:f:Ersuiz")) != TB_OPT_END) {
		switch (c) {
		case 'n': sd.quiet = true; break;
		case 'E':
		case 'r': sd.s.ere = true; break;
		case 's': sd.separate = true; break;
		case 'i': sd.inplace = sd.separate = true; break;
		case 'u': case 'z': break;
		case 'e':
			tb_buf_adds(&script, o.arg);
			tb_buf_addc(&script, '\n');
			have_script = true;
			break;
		case 'f':
			if (add_script_file(&sd, &script, o.arg) != 0)
				goto out;
			have_script = true;
			break;
		case TB_OPT_LONG:
			if (strcmp(o.arg, "quiet") == 0 ||
			    strcmp(o.arg, "silent") == 0)
				sd.quiet = true;
			else if (strcmp(o.arg, "regexp-extended") == 0)
				sd.s.ere = true;
			else if (strncmp(o.arg, "expression=", 11) == 0) {
				tb_buf_adds(&script, o.arg + 11);
				tb_buf_addc(&script, '\n');
				have_script = true;
			} else if (strcmp(o.arg, "posix") != 0 &&
			    strcmp(o.arg, "separate") != 0) {
				tb_opt_bad_long(&o);
				goto out;
			}
			break;
		default:
			goto out;
		}
	}
	if (!have_script) {
		if (o.ind >= argc) {
			tb_err(io, "sed", "no script specified\n"
			    "Usage: sed [OPTION]... {script} [FILE]...");
			goto out;
		}
		tb_buf_adds(&script, argv[o.ind++]);
	}
	if (sed_parse(io, &sd.s, tb_buf_str(&script)) != 0)
		goto out;
	if (sd.s.quiet_hint)
		sd.quiet = true;
	sd.files = argv + o.ind;
	sd.nfiles = argc - o.ind;
	rc = 0;
	if (sd.inplace) {
		if (sd.nfiles == 0) {
			tb_err(io, "sed", "no input files");
			rc = 1;
			goto out;
		}
		if (suffix != NULL && *suffix != '\0')
			for (int i = 0; i < sd.nfiles; i++) {
				char *bak = tb_xmalloc(strlen(sd.files[i]) +
				    strlen(suffix) + 1);

				strcat(strcpy(bak, sd.files[i]), suffix);
				FILE *a = fopen(sd.files[i], "r");
				FILE *b = a ? fopen(bak, "w") : NULL;

				if (a && b)
					tb_copy(a, b);
				if (a)
					fclose(a);
				if (b)
					fclose(b);
				free(bak);
			}
		rc = sed_inplace(&sd);
		goto out;
	}
	while (!sd.quit && sed_open_next(&sd)) {
		sed_fill_next(&sd, !sd.separate);
		sed_run_stream(&sd);
		if (!sd.separate)
			break;
	}
	rc = sd.rc;
out:
	if (sd.in != NULL)
		tb_close_in(io, sd.in);
	sed_script_free(&sd.s);
	tb_buf_free(&script);
	tb_buf_free(&sd.ps);
	tb_buf_free(&sd.hs);
	tb_buf_free(&sd.next);
	tb_buf_free(&sd.append);
	free(suffix_copy);
	return rc;
}
