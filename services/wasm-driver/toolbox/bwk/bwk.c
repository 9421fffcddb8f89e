/*
 * bwk.c - the awk applet: BWK awk (original-awk, third_party/) run inside
 * the toolbox, and the shims bwk_shim.h maps its libc calls to.
 *
 * BWK awk is a program: globals, exit() on errors, files closed at exit.
 * The toolbox runs applets in one process, many times, and nests them
 * (awk's system() runs the shell, which may run awk). So each run:
 * - under WASI: starts from awk's variables as they were before the first
 *   run (bwk_begin.c and bwk_end.c bracket them; a nested run puts the
 *   outer run's back afterwards), and exit() unwinds the stack to
 *   applet_awk with binaryen's asyncify (the build instruments awk's
 *   functions only, see wasm_awk.py): bwk_try_ is not instrumented, so
 *   the unwinding ends when control comes back to it;
 * - natively (tests): runs in a forked child whose output is copied to
 *   the applet's streams, and exit() is _exit() there.
 * What a run allocates is freed when it ends; files and pipes it left
 * open are closed (an output pipe's command then runs, as at exit).
 */
#include "../toolbox.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef __wasm__
#include <poll.h>
#include <setjmp.h>
#include <sys/wait.h>
#endif

int bwk_main(int argc, char *argv[]);
int bwk_try_(void (*fn)(void *), void *arg);
int bwk_rethrow(int caught);
void bwk_exit(int status);
void bwk_throw_exit(void);

FILE *bwk_stdin, *bwk_stdout, *bwk_stderr;

/* A file or pipe the run opened (bwk_fopen, bwk_popen). */
struct bwk_file {
	FILE		*f;
	int		 kind;	/* 'f' file, 'r' / 'w' pipe */
	char		*cmd;
	int		 status;	/* of a finished 'r' command */
	struct tb_mem	 mem;
	char		*iobuf;	/* its buffer when bigger than stdio's */
	struct bwk_file	*next;
};

/* One run's state outside the program's own variables. */
struct bwk_run {
	int		(*prog)(int, char **);	/* its main() */
	int		 argc;
	char		**argv;
	int		 status;
	int		 exit_status;	/* of bwk_exit */
	struct bwk_block *blocks;	/* what the run allocated */
	struct bwk_file	*files;
};

static struct bwk_run *cur;

/* --- allocation: a list of blocks, freed together when the run ends --- */

struct bwk_block {
	alignas(max_align_t) struct bwk_block *next;
	struct bwk_block *prev;
};

static void *
block_link(struct bwk_block *b)
{
	b->prev = NULL;
	b->next = cur->blocks;
	if (b->next != NULL)
		b->next->prev = b;
	cur->blocks = b;
	return b + 1;
}

static void
block_unlink(struct bwk_block *b)
{
	if (b->prev != NULL)
		b->prev->next = b->next;
	else
		cur->blocks = b->next;
	if (b->next != NULL)
		b->next->prev = b->prev;
}

void *
bwk_malloc(size_t n)
{
	struct bwk_block *b;

	if (n > SIZE_MAX - sizeof(*b) || (b = malloc(sizeof(*b) + n)) == NULL)
		return NULL;
	return block_link(b);
}

void *
bwk_calloc(size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	if ((p = bwk_malloc(n * size)) != NULL)
		memset(p, 0, n * size);
	return p;
}

void
bwk_free(void *p)
{
	struct bwk_block *b;

	if (p == NULL)
		return;
	b = (struct bwk_block *)p - 1;
	block_unlink(b);
	free(b);
}

void *
bwk_realloc(void *p, size_t n)
{
	struct bwk_block *b, *nb;

	if (p == NULL)
		return bwk_malloc(n);
	if (n > SIZE_MAX - sizeof(*b))
		return NULL;
	b = (struct bwk_block *)p - 1;
	block_unlink(b);
	if ((nb = realloc(b, sizeof(*b) + n)) == NULL) {
		block_link(b);
		return NULL;
	}
	return block_link(nb);
}

char *
bwk_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = bwk_malloc(n);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

char *
bwk_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = bwk_malloc(len + 1);

	if (p != NULL) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

/* What libc allocates itself is copied into the run's blocks. */
static char *line_scratch;	/* getdelim()'s own buffer, freed at the end */
static size_t line_scratch_n;

ssize_t
bwk_getdelim(char **lp, size_t *np, int delim, FILE *f)
{
	ssize_t len = getdelim(&line_scratch, &line_scratch_n, delim, f);

	if (len < 0) {
#ifdef __wasi__
		struct stat st;

		/* WASI reads a directory as EBADF (grep dir) */
		if (errno == EBADF && fstat(fileno(f), &st) == 0 &&
		    S_ISDIR(st.st_mode))
			errno = EISDIR;
#endif
		return len;
	}
	if (*lp == NULL || *np < (size_t)len + 1) {
		char *p = bwk_realloc(*lp, (size_t)len + 1);

		if (p == NULL) {
			errno = ENOMEM;
			return -1;
		}
		*lp = p;
		*np = (size_t)len + 1;
	}
	memcpy(*lp, line_scratch, (size_t)len + 1);
	return len;
}

ssize_t
bwk_getline(char **lp, size_t *np, FILE *f)
{
	return bwk_getdelim(lp, np, '\n', f);
}

char *
bwk_getcwd(char *buf, size_t n)
{
	char *cwd, *p;

	if (buf != NULL)
		return getcwd(buf, n);
	if ((cwd = getcwd(NULL, 0)) == NULL)
		return NULL;
	p = bwk_strdup(cwd);
	free(cwd);
	return p;
}

/* --- files and pipes: pipes run their command through the shell --- */

static int
run_shell(const char *cmd, FILE *in, FILE *out)
{
	struct tb_io io = { in, out, bwk_stderr };
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)cmd, NULL };

	fflush(bwk_stdout);
	return applet_sh(&io, 3, argv);
}

static struct bwk_file *
file_add(FILE *f, int kind)
{
	struct bwk_file *bf = calloc(1, sizeof(*bf));

	if (bf == NULL)
		return NULL;
	bf->f = f;
	bf->kind = kind;
	bf->mem.limit = TB_MEM_LIMIT;
	bf->next = cur->files;
	cur->files = bf;
	return bf;
}

FILE *
bwk_track_stream(FILE *f)
{
	if (file_add(f, 'f') == NULL) {
		fclose(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

/* wasi-libc's stdio reads 1 KiB at a time: a file read line by line gets
 * this much (10 MB in 100 files: 200 reads instead of 11,000). */
#define BWK_IOBUF	(64u << 10)

FILE *
bwk_track_stream_buffered(FILE *f)
{
	struct bwk_file *bf;

	if ((f = bwk_track_stream(f)) == NULL)
		return NULL;
	bf = cur->files;	/* file_add put it first */
	if ((bf->iobuf = malloc(BWK_IOBUF)) != NULL &&
	    setvbuf(f, bf->iobuf, _IOFBF, BWK_IOBUF) != 0) {
		free(bf->iobuf);
		bf->iobuf = NULL;
	}
	return f;
}

static struct bwk_file *
file_take(FILE *f)
{
	for (struct bwk_file **p = &cur->files; *p != NULL; p = &(*p)->next)
		if ((*p)->f == f) {
			struct bwk_file *bf = *p;

			*p = bf->next;
			return bf;
		}
	return NULL;
}

/* Closes bf's stream (running a 'w' pipe's command) and frees bf; the
 * pclose()-style status, or -1. */
static int
file_close(struct bwk_file *bf)
{
	int rc = 0;

	if (bf->kind == 'f') {
		rc = fclose(bf->f) == 0 ? 0 : -1;
	} else if (bf->kind == 'r') {
		fclose(bf->f);
		rc = bf->status << 8;
	} else {
		FILE *in;

		fclose(bf->f);
		if ((in = tb_mem_reader(&bf->mem)) == NULL) {
			rc = -1;
		} else {
			rc = run_shell(bf->cmd, in, bwk_stdout) << 8;
			fclose(in);
		}
	}
	tb_mem_free(&bf->mem);
	free(bf->iobuf);
	free(bf->cmd);
	free(bf);
	return rc;
}

FILE *
bwk_fopen(const char *path, const char *mode)
{
	FILE *f;

	/* A WASI sandbox has no /dev. */
	if (strcmp(path, "/dev/stdin") == 0)
		return bwk_stdin;
	if (strcmp(path, "/dev/null") == 0)
		f = tb_null_stream(mode);
	else
		f = fopen(path, mode);
	if (f != NULL && file_add(f, 'f') == NULL) {
		fclose(f);
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

int
bwk_fclose(FILE *f)
{
	struct bwk_file *bf = file_take(f);

	if (bf != NULL)
		return file_close(bf) == 0 ? 0 : EOF;
	if (f == bwk_stdin || f == bwk_stdout || f == bwk_stderr)
		return 0;
	return fclose(f);
}

FILE *
bwk_popen(const char *cmd, const char *mode)
{
	struct bwk_file *bf;
	FILE *f;

	if ((bf = file_add(NULL, mode[0] == 'w' ? 'w' : 'r')) == NULL ||
	    (bf->cmd = strdup(cmd)) == NULL) {
		if (bf != NULL)
			free(file_take(NULL));
		errno = ENOMEM;
		return NULL;
	}
	if (bf->kind == 'w') {
		bf->f = tb_mem_writer(&bf->mem);
	} else if ((f = tb_mem_writer(&bf->mem)) != NULL) {
		bf->status = run_shell(cmd, bwk_stdin, f);
		fclose(f);
		bf->f = tb_mem_reader(&bf->mem);
	}
	if (bf->f == NULL) {
		file_close(file_take(NULL));
		errno = ENOMEM;
		return NULL;
	}
	return bf->f;
}

int
bwk_pclose(FILE *f)
{
	struct bwk_file *bf = file_take(f);

	return bf != NULL ? file_close(bf) : -1;
}

int
bwk_system(const char *cmd)
{
	return run_shell(cmd, bwk_stdin, bwk_stdout) << 8;
}

/* Closes what the run left open, oldest first (as awk's closeall). */
static void
files_close_all(void)
{
	while (cur->files != NULL) {
		struct bwk_file **p = &cur->files;

		while ((*p)->next != NULL)
			p = &(*p)->next;
		struct bwk_file *bf = *p;
		*p = NULL;
		file_close(bf);
	}
}

/* --- exit and the awk statement exit --- */

#define THROW_EXIT_STMT	1
#define THROW_EXIT	2

#ifdef __wasm__
#define ASYNCIFY(name) \
	__attribute__((import_module("asyncify"), import_name(name)))
ASYNCIFY("start_unwind") void asyncify_start_unwind(void *data);
ASYNCIFY("stop_unwind") void asyncify_stop_unwind(void);

/* asyncify's data: where the unwinding frames save their locals (never
 * read back: nothing is rewound). */
#define UNWIND_BYTES	(1u << 20)
static struct { uint32_t cur, end; } *unwind_buf;
static int throwing;	/* THROW_* while the stack unwinds */

void bwk_start_unwind(int kind);

__attribute__((noinline)) void
bwk_start_unwind(int kind)
{
	if (unwind_buf == NULL &&
	    (unwind_buf = malloc(sizeof(*unwind_buf) + UNWIND_BYTES)) == NULL)
		abort();
	unwind_buf->cur = (uint32_t)(uintptr_t)(unwind_buf + 1);
	unwind_buf->end = unwind_buf->cur + UNWIND_BYTES;
	throwing = kind;
	asyncify_start_unwind(unwind_buf);
}

static void *
stack_pointer(void)
{
	void *sp;

	__asm__ volatile("global.get __stack_pointer\n\tlocal.set %0"
	    : "=r"(sp));
	return sp;
}

static void
stack_pointer_set(void *sp)
{
	__asm__ volatile("local.get %0\n\tglobal.set __stack_pointer"
	    :: "r"(sp));
}

int
bwk_try_(void (*fn)(void *), void *arg)
{
	void *sp = stack_pointer();
	int kind;

	fn(arg);
	if (throwing == 0)
		return 0;
	asyncify_stop_unwind();
	stack_pointer_set(sp);
	kind = throwing;
	throwing = 0;
	return kind;
}

__attribute__((noinline)) int
bwk_rethrow(int caught)
{
	if (caught == THROW_EXIT)
		bwk_start_unwind(THROW_EXIT);
	return caught != 0;
}

__attribute__((noinline)) void
bwk_exit(int status)
{
	cur->exit_status = status;
	bwk_start_unwind(THROW_EXIT);
}

__attribute__((noinline)) void
bwk_throw_exit(void)
{
	bwk_start_unwind(THROW_EXIT_STMT);
}

#else /* native: setjmp for the awk statement, exit() ends the child */

static jmp_buf *try_top;

int
bwk_try_(void (*fn)(void *), void *arg)
{
	jmp_buf jb, *prev = try_top;

	try_top = &jb;
	if (setjmp(jb) == 0) {
		fn(arg);
		try_top = prev;
		return 0;
	}
	try_top = prev;
	return THROW_EXIT_STMT;
}

int
bwk_rethrow(int caught)
{
	return caught != 0;
}

void
bwk_throw_exit(void)
{
	if (try_top != NULL)
		longjmp(*try_top, 1);
	bwk_exit(0);
}

void
bwk_exit(int status)
{
	files_close_all();
	fflush(bwk_stdout);
	fflush(bwk_stderr);
	_exit(status & 0xff);
}
#endif

/* --- the applet --- */

void bwk_run_main(void *p);

__attribute__((noinline)) void
bwk_run_main(void *p)
{
	struct bwk_run *r = p;

	r->status = r->prog(r->argc, r->argv);
}

#ifdef __wasm__
extern char bwk_bss_begin[], bwk_bss_end[], bwk_data_begin[], bwk_data_end[];

static char *
min_ptr(char *a, char *b)
{
	return a < b ? a : b;
}

static char *
max_ptr(char *a, char *b)
{
	return a > b ? a : b;
}

int
bwk_run(struct tb_io *io, int argc, char **argv, int (*prog)(int, char **))
{
	static char *pristine;	/* the programs' variables before any run */
	char *lo = min_ptr(bwk_bss_begin, bwk_data_begin);
	char *hi = max_ptr(bwk_bss_end, bwk_data_end) + 1;
	size_t len = (size_t)(hi - lo);
	struct bwk_run run = { prog, argc, argv, 0, 0, NULL, NULL };
	struct bwk_run *outer = cur;
	FILE *o_in = bwk_stdin, *o_out = bwk_stdout, *o_err = bwk_stderr;
	char *saved = NULL;

	/* awk's main() writes into argv (argv[0] = cmdname after options):
	 * it gets a copy, so the caller's array keeps its own strings. */
	if ((run.argv = calloc((size_t)argc + 1, sizeof(*run.argv))) == NULL)
		goto nomem;
	memcpy(run.argv, argv, (size_t)argc * sizeof(*argv));
	if (pristine == NULL) {
		if ((pristine = malloc(len)) == NULL)
			goto nomem;
		memcpy(pristine, lo, len);
	} else {
		if (outer != NULL) {	/* awk -> sh -> awk */
			if ((saved = malloc(len)) == NULL)
				goto nomem;
			memcpy(saved, lo, len);
		}
		memcpy(lo, pristine, len);
	}
	cur = &run;
	bwk_stdin = io->in;
	bwk_stdout = io->out;
	bwk_stderr = io->err;
	if (bwk_try_(bwk_run_main, &run) != 0)
		run.status = run.exit_status;
	files_close_all();
	tbx_io_close_all();
	tbx_env_restore();
	free(line_scratch);
	line_scratch = NULL;
	line_scratch_n = 0;
	fflush(io->out);
	fflush(io->err);
	while (run.blocks != NULL) {
		struct bwk_block *b = run.blocks;

		run.blocks = b->next;
		free(b);
	}
	free(run.argv);
	if (saved != NULL) {
		memcpy(lo, saved, len);
		free(saved);
	}
	cur = outer;
	bwk_stdin = o_in;
	bwk_stdout = o_out;
	bwk_stderr = o_err;
	return run.status & 0xff;
nomem:
	free(run.argv);
	tb_err(io, argv[0], "out of memory");
	return 2;
}

#else

/* Copies the child's output pipes to io->out and io->err until both end. */
static void
pump(struct tb_io *io, int out_fd, int err_fd)
{
	struct pollfd p[2] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 } };
	FILE *dst[2] = { io->out, io->err };
	char buf[65536];
	int open = 2;

	while (open > 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (p[i].fd < 0 || p[i].revents == 0)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			/* A destination that refuses more (a full pipe
			 * stage): the child's next write fails, as when its
			 * reader is gone (yes | head). */
			if (n <= 0 ||
			    fwrite(buf, 1, (size_t)n, dst[i]) != (size_t)n) {
				close(p[i].fd);
				p[i].fd = -1;
				open--;
			}
		}
	}
}

/* Set in the child that runs awk: awk in awk (through system()) there. */
static bool in_child;

/*
 * awk inside awk's child: this process's awk variables are the outer
 * run's, so a fresh copy of the program runs it ("busybox awk ..."), its
 * stdin fed by one more child from io->in. Does not return.
 */
static void
exec_fresh(struct tb_io *io, int argc, char **argv, int out_fd, int err_fd)
{
	char **nargv = calloc((size_t)argc + 2, sizeof(*nargv));
	int in_p[2];
	pid_t w;

	if (nargv == NULL || pipe(in_p) != 0)
		_exit(2);
	if ((w = fork()) < 0)
		_exit(2);
	if (w == 0) {
		char buf[65536];
		size_t n;

		close(in_p[0]);
		while ((n = fread(buf, 1, sizeof(buf), io->in)) > 0)
			if (write(in_p[1], buf, n) != (ssize_t)n)
				break;
		_exit(0);
	}
	close(in_p[1]);
	if (dup2(in_p[0], 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(2);
	nargv[0] = (char *)"busybox";
	memcpy(nargv + 1, argv, (size_t)argc * sizeof(*argv));
	nargv[1] = (char *)tb_basename(argv[0]);
	execv("/proc/self/exe", nargv);
	_exit(127);
}

int
bwk_run(struct tb_io *io, int argc, char **argv, int (*prog)(int, char **))
{
	int out_p[2], err_p[2], st;
	pid_t pid;

	fflush(io->out);
	fflush(io->err);
	if (pipe(out_p) != 0) {
		tb_errno(io, argv[0], "pipe");
		return 2;
	}
	if (pipe(err_p) != 0) {
		tb_errno(io, argv[0], "pipe");
		close(out_p[0]);
		close(out_p[1]);
		return 2;
	}
	if ((pid = fork()) < 0) {
		tb_errno(io, argv[0], "fork");
		close(out_p[0]);
		close(out_p[1]);
		close(err_p[0]);
		close(err_p[1]);
		return 2;
	}
	if (pid == 0) {
		struct bwk_run run = { prog, argc, argv, 0, 0, NULL, NULL };

		close(out_p[0]);
		close(err_p[0]);
		if (in_child)
			exec_fresh(io, argc, argv, out_p[1], err_p[1]);
		in_child = true;
		cur = &run;
		bwk_stdin = io->in;
		/* One stream when the caller's are one (2>&1, &>): the
		 * order of what is written is kept. */
		if ((bwk_stdout = fdopen(out_p[1], "w")) == NULL ||
		    (bwk_stderr = io->err == io->out ? bwk_stdout :
		    fdopen(err_p[1], "w")) == NULL)
			_exit(2);
		bwk_run_main(&run);
		bwk_exit(run.status);
	}
	close(out_p[1]);
	close(err_p[1]);
	pump(io, out_p[0], err_p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			tb_errno(io, argv[0], "waitpid");
			return 2;
		}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
#endif

int
applet_awk(struct tb_io *io, int argc, char **argv)
{
	return bwk_run(io, argc, argv, bwk_main);
}
