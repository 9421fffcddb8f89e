/*
 * fuzz_wasi_args.c - feeds random WASI calls, with random pointers,
 * lengths, flags and paths, into the WASI host (services/wasm-driver/host)
 * against a guest memory of a random size and a temporary root. Checks
 * that nothing crashes or reads or writes past the guest memory (ASan)
 * and that nothing next to the root changes: no escape. Built as a
 * libFuzzer target with -Dfuzz=true (clang), else as a replay program
 * that runs the files given on its command line (tests/fuzz/corpus-wasi).
 *
 * Input: u16 memory size, then operations: a byte picks a WASI function
 * (or a poke of bytes or of a known nasty path into memory) and the
 * arguments follow, each a mode byte plus a value biased towards the
 * edges of memory.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi_host.h"

struct in {
	const uint8_t *p;
	size_t n;
};

static char base[64], root[96], outside[96], secret[128];
static struct wasi_ctx ctx;
static wasm_rt_memory_t mem;
static jmp_buf exit_jmp;
static unsigned runs;

/* The last three are set up at run time: host paths next to the root. */
static char abs_secret[128], abs_outside[96], abs_new[128];
static const char *nasty[] = { "..", "../", "../outside/secret",
	"/etc/passwd", "/proc/self/root/etc/passwd", "hostlink/secret",
	"hostlink", "a/b/../../..", ".", "/", "dir/..", "dir/../../x",
	"file", "dir", "dir/", "link-up", "../../../../../../tmp", "abs",
	"/proc/self/fd/3", "dir/./sub", "file/", "x\0y", "",
	abs_secret, abs_outside, abs_new };
static char *const guest_argv[] = { "fuzz", "a", NULL };
static char *const guest_envp[] = { "PWD=/", NULL };

static uint8_t
byte(struct in *in)
{
	if (in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

static uint64_t
raw(struct in *in, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)byte(in) << (8 * i);
	return v;
}

/* An argument: raw, small, inside memory, or near its end. */
static uint32_t
arg(struct in *in)
{
	switch (byte(in) & 3) {
	case 0:
		return (uint32_t)raw(in, 4);
	case 1:
		return byte(in);
	case 2:
		return (uint32_t)(raw(in, 2) % (mem.size + 1));
	default:
		return mem.size - (uint32_t)(byte(in) % (mem.size + 1));
	}
}

static uint64_t
arg64(struct in *in)
{
	return (byte(in) & 1) ? raw(in, 8) : byte(in);
}

static void
poke(uint32_t off, const void *src, size_t len)
{
	if (off < mem.size)
		memcpy(mem.data + off, src, len < mem.size - off ? len :
		    mem.size - off);
}

/* Clock subscriptions must not sleep: at most a microsecond, relative. */
static void
tame_poll(uint32_t in, uint32_t n)
{
	for (uint64_t i = 0; i < n && in + (i + 1) * 48 <= mem.size; i++) {
		uint8_t *s = mem.data + in + i * 48;
		uint64_t t;

		if (s[8] != 0)
			continue;
		memcpy(&t, s + 24, 8);
		t %= 1000;
		memcpy(s + 24, &t, 8);
		s[40] &= (uint8_t)~1u;
	}
}

static void
call(struct in *in, uint8_t op)
{
	uint32_t a = arg(in), b = arg(in), c = arg(in), d = arg(in);
	uint32_t e = arg(in), f = arg(in), g = arg(in);
	uint64_t x = arg64(in), y = arg64(in);
	struct wasi_ctx *w = &ctx;

	switch (op % 46) {
	case 0: WASI_FN(args_get)(w, a, b); break;
	case 1: WASI_FN(args_sizes_get)(w, a, b); break;
	case 2: WASI_FN(environ_get)(w, a, b); break;
	case 3: WASI_FN(environ_sizes_get)(w, a, b); break;
	case 4: WASI_FN(clock_res_get)(w, a, b); break;
	case 5: WASI_FN(clock_time_get)(w, a, x, b); break;
	case 6: WASI_FN(fd_advise)(w, a, x, y, b); break;
	case 7: /* no disk-filling allocations */
		WASI_FN(fd_allocate)(w, a, x % 65536, y % 65536); break;
	case 8: WASI_FN(fd_close)(w, a % 16); break;
	case 9: WASI_FN(fd_datasync)(w, a); break;
	case 10: WASI_FN(fd_fdstat_get)(w, a % 16, b); break;
	case 11: WASI_FN(fd_fdstat_set_flags)(w, a % 16, b); break;
	case 12: WASI_FN(fd_fdstat_set_rights)(w, a, x, y); break;
	case 13: WASI_FN(fd_filestat_get)(w, a % 16, b); break;
	case 14: WASI_FN(fd_filestat_set_size)(w, a % 16, x % (1 << 20));
		break;
	case 15: WASI_FN(fd_filestat_set_times)(w, a % 16, x, y, b); break;
	case 16: WASI_FN(fd_pread)(w, a % 16, b, c, x, d); break;
	case 17: WASI_FN(fd_prestat_get)(w, a % 16, b); break;
	case 18: WASI_FN(fd_prestat_dir_name)(w, a % 16, b, c); break;
	case 19: WASI_FN(fd_pwrite)(w, a % 16, b, c, x % (1 << 20), d);
		break;
	case 20: WASI_FN(fd_read)(w, a % 16, b, c, d); break;
	case 21: WASI_FN(fd_readdir)(w, a % 16, b, c, x, d); break;
	case 22: WASI_FN(fd_renumber)(w, a % 16, b % 16); break;
	case 23: WASI_FN(fd_seek)(w, a % 16, x, b, c); break;
	case 24: WASI_FN(fd_sync)(w, a); break;
	case 25: WASI_FN(fd_tell)(w, a % 16, b); break;
	case 26: WASI_FN(fd_write)(w, a % 16, b, c, d); break;
	case 27: WASI_FN(path_create_directory)(w, a % 8, b, c); break;
	case 28: WASI_FN(path_filestat_get)(w, a % 8, b, c, d, e); break;
	case 29: WASI_FN(path_filestat_set_times)(w, a % 8, b, c, d, x, y,
		e); break;
	case 30: WASI_FN(path_link)(w, a % 8, b, c, d, e % 8, f, g); break;
	case 31: WASI_FN(path_open)(w, a % 8, b, c, d, e, x, y, f, g); break;
	case 32: WASI_FN(path_readlink)(w, a % 8, b, c, d, e, f); break;
	case 33: WASI_FN(path_remove_directory)(w, a % 8, b, c); break;
	case 34: WASI_FN(path_rename)(w, a % 8, b, c, d % 8, e, f); break;
	case 35: WASI_FN(path_symlink)(w, a, b, c % 8, d, e); break;
	case 36: WASI_FN(path_unlink_file)(w, a % 8, b, c); break;
	case 37: tame_poll(a, c % 64);
		WASI_FN(poll_oneoff)(w, a, b, c % 64, d); break;
	case 38: WASI_FN(proc_raise)(w, a); break;
	case 39: WASI_FN(sched_yield)(w); break;
	case 40: WASI_FN(random_get)(w, a, b); break;
	case 41: WASI_FN(sock_accept)(w, a, b, c); break;
	case 42: WASI_FN(sock_recv)(w, a, b, c, d, e, f); break;
	case 43: WASI_FN(sock_send)(w, a, b, c, d, e); break;
	case 44: WASI_FN(sock_shutdown)(w, a, b); break;
	default:
		if (setjmp(exit_jmp) == 0)
			WASI_FN(proc_exit)(w, a);
		break;
	}
}

static void
on_exit_jump(struct wasi_ctx *c)
{
	(void)c;
	longjmp(exit_jmp, 1);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

static int
rm_all(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void
cleanup(void)
{
	nftw(base, rm_all, 16, FTW_DEPTH | FTW_PHYS);
}

/* Empties the root and puts the seed files back. */
static void
seed_root(void)
{
	char p[256];

	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(p, sizeof(p), "%s/file", root);
	close(open(p, O_WRONLY | O_CREAT, 0644));
	snprintf(p, sizeof(p), "%s/dir", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/dir/sub", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/hostlink", root);
	symlink("../outside", p);
	snprintf(p, sizeof(p), "%s/abs", root);
	symlink(outside, p);
	snprintf(p, sizeof(p), "%s/link-up", root);
	symlink("../../../..", p);
}

static void
setup(void)
{
	FILE *f;

	snprintf(base, sizeof(base), "/tmp/fuzz-wasi-XXXXXX");
	if (mkdtemp(base) == NULL)
		abort();
	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	snprintf(secret, sizeof(secret), "%s/secret", outside);
	if (mkdir(root, 0755) != 0 || mkdir(outside, 0755) != 0 ||
	    (f = fopen(secret, "w")) == NULL)
		abort();
	fputs("SECRET\n", f);
	fclose(f);
	snprintf(abs_secret, sizeof(abs_secret), "%s", secret);
	snprintf(abs_outside, sizeof(abs_outside), "%s", outside);
	snprintf(abs_new, sizeof(abs_new), "%s/new", outside);
	atexit(cleanup);
	seed_root();
}

static int
count_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* No escape: next to the root, everything is as setup() left it. */
static void
check_outside(void)
{
	char buf[16] = { 0 };
	FILE *f = fopen(secret, "r");

	if (f == NULL || fread(buf, 1, sizeof(buf) - 1, f) != 7 ||
	    strcmp(buf, "SECRET\n") != 0 || count_entries(outside) != 1 ||
	    count_entries(base) != 2) {
		fprintf(stderr, "fuzz_wasi_args: something changed outside "
				"the root %s\n", root);
		abort();
	}
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	uint32_t msize;

	if (base[0] == '\0')
		setup();
	if (++runs % 512 == 0 || count_entries(root) > 200)
		seed_root();
	msize = (uint32_t)raw(&in, 2) + 1;
	if ((mem.data = malloc(msize)) == NULL)
		return 0;
	memset(mem.data, 0, msize);
	mem.size = msize;
	mem.pages = 1;
	mem.max_pages = 1;
	if (wasi_ctx_init(&ctx, root, guest_argv, guest_envp,
		on_exit_jump) != 0)
		abort();
	ctx.mem = &mem;
	/* The guest's stdio is /dev/null, never the fuzzer's own fds. */
	for (int i = 0; i < 3; i++)
		ctx.fds[i].host = open("/dev/null", O_RDWR | O_CLOEXEC);
	while (in.n > 0) {
		uint8_t op = byte(&in);

		if (op >= 0xf0) {               /* poke bytes */
			uint32_t off = (uint32_t)raw(&in, 2);
			size_t len = byte(&in) % 64;

			len = len < in.n ? len : in.n;
			poke(off, in.p, len);
			in.p += len;
			in.n -= len;
		} else if (op >= 0xe0) {        /* poke a nasty path */
			const char *s = nasty[byte(&in) % (sizeof(nasty) /
			    sizeof(nasty[0]))];

			poke((uint32_t)raw(&in, 2), s, strlen(s) +
			    (op & 1));
		} else {
			call(&in, op);
		}
	}
	wasi_ctx_fini(&ctx);
	free(mem.data);
	mem.data = NULL;
	check_outside();
	return 0;
}
