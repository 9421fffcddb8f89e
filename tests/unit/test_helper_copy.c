/*
 * test_helper_copy.c - lib/msc_helper_copy.c over an exec that runs its
 * argv on this host (/bin/sh, coreutils' base64), as a text-only backend
 * (Fly's exec API) would in its Machine: the helper copied in on first
 * need, argv passed unchanged (newlines, quotes, $( )), any bytes on
 * stdin and stdout, the helper's exit status kept, the output limit, a
 * command not naming the helper left alone. The "helper" is a small
 * script standing in for msc-exec-helper.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_base64.h"
#include "msc_helper_copy.h"

/* Prints each argument on its own line between [ ], then stdin, then a
 * NUL and 0xff, and exits 3. */
static const char fake_helper[] =
    "#!/bin/sh\n"
    "for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\n"
    "cat\n"
    "printf '\\000\\377'\n"
    "exit 3\n";

static char helper_file[64];

struct seen {
	int calls;
	int installs;
	bool text_seen;          /* every stdin sent was base64 text */
	size_t stdin_len;
};

static struct seen seen;

static int
slurp_fd(int fd, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *b;

	if (fstat(fd, &st) != 0 || lseek(fd, 0, SEEK_SET) != 0 ||
	    (b = malloc((size_t)st.st_size + 1)) == NULL)
		return -EIO;
	if (pread(fd, b, (size_t)st.st_size, 0) != st.st_size) {
		free(b);
		return -EIO;
	}
	*out = b;
	*len = (size_t)st.st_size;
	return 0;
}

static bool
is_b64_text(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' &&
		    p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
		    p[i] == '+' || p[i] == '/' || p[i] == '='))
			return false;
	return true;
}

/* Runs req's argv here, stdin from a file, stdout and stderr to files. */
static int
local_exec(void *be, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *res, char *err, size_t errlen)
{
	char in[] = "/tmp/msc-hc-in.XXXXXX", out[] = "/tmp/msc-hc-out.XXXXXX",
	    er[] = "/tmp/msc-hc-err.XXXXXX";
	int fi = mkstemp(in), fo = mkstemp(out), fe = mkstemp(er), st;
	pid_t pid;

	(void)be;
	(void)err;
	(void)errlen;
	assert_true(fi >= 0 && fo >= 0 && fe >= 0);
	unlink(in);
	unlink(out);
	unlink(er);
	seen.calls++;
	if (req->n_args > 2 &&
	    strstr(req->args[2], "mktemp /tmp/.msc-helper") != NULL)
		seen.installs++;
	if (req->has_stdin) {
		if (!is_b64_text(req->stdin.data, req->stdin.len))
			seen.text_seen = false;
		seen.stdin_len += req->stdin.len;
		assert_int_equal(write(fi, req->stdin.data, req->stdin.len),
		    (ssize_t)req->stdin.len);
		lseek(fi, 0, SEEK_SET);
	}
	if ((pid = fork()) == 0) {
		char **argv = calloc(req->n_args + 1, sizeof(char *));

		for (size_t i = 0; i < req->n_args; i++)
			argv[i] = req->args[i];
		dup2(req->has_stdin ? fi : open("/dev/null", O_RDONLY), 0);
		dup2(fo, 1);
		dup2(fe, 2);
		execv(argv[0], argv);
		_exit(126);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	res->outcome = MSC__V1__EXEC_OUTCOME__EXITED;
	res->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	assert_int_equal(slurp_fd(fo, &res->stdout.data, &res->stdout.len), 0);
	assert_int_equal(slurp_fd(fe, &res->stderr.data, &res->stderr.len), 0);
	/* a text-only transport: the output must be text too */
	close(fi);
	close(fo);
	close(fe);
	return 0;
}

static const struct msc_helper_copy text_copy = {
	.exec = local_exec, .text_only = true,
};
static const struct msc_helper_copy raw_copy = {
	.exec = local_exec, .text_only = false,
};

static int
setup(void **state)
{
	int fd;

	(void)state;
	snprintf(helper_file, sizeof(helper_file), "/tmp/msc-hc-bin.XXXXXX");
	fd = mkstemp(helper_file);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, fake_helper, sizeof(fake_helper) - 1),
	    (ssize_t)sizeof(fake_helper) - 1);
	close(fd);
	setenv("MSC_EXEC_HELPER", helper_file, 1);
	return 0;
}

static int
teardown(void **state)
{
	int rv;

	(void)state;
	/* the copy the tests made: /tmp/.msc-helper-<digest of the script> */
	rv = system("for f in /tmp/.msc-helper-*; do "
	    "cmp -s \"$f\" \"$MSC_EXEC_HELPER\" && rm -f \"$f\"; done; true");
	unlink(helper_file);
	return rv == -1 ? -1 : 0;
}

static void
run(const struct msc_helper_copy *hc, char **args, size_t n,
    const uint8_t *in, size_t inlen, uint64_t limit,
    Msc__V1__ExecResult *res, int expect_rv)
{
	Msc__V1__ExecRequest q = MSC__V1__EXEC_REQUEST__INIT;
	char err[512] = "";

	q.computer_id = "c1";
	q.args = args;
	q.n_args = n;
	q.timeout_s = 10;
	q.output_limit = limit;
	if (in != NULL) {
		q.has_stdin = true;
		q.stdin.data = (uint8_t *)in;
		q.stdin.len = inlen;
	}
	assert_int_equal(msc_helper_copy_exec(hc, NULL, &q, res, err,
	    sizeof(err)), expect_rv);
}

/* The first call copies the helper in (its bytes as base64 on stdin);
 * argv, stdin and stdout pass unchanged, any bytes. */
static void
test_text_round_trip(void **state)
{
	char *args[] = { "/.msc-helper", "--file", "write",
		"/tmp/we\"i'rd\nna me $(touch owned) `id`", "0" };
	const uint8_t in[] = { 0, 1, 'x', 0xff, 0xfe, '\n', 0x80 };
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;
	const char *want_head = "[--file]\n[write]\n"
	    "[/tmp/we\"i'rd\nna me $(touch owned) `id`]\n[0]\n";
	size_t hl = strlen(want_head);

	(void)state;
	seen = (struct seen){ .text_seen = true };
	run(&text_copy, args, 5, in, sizeof(in), 1 << 20, &res, 0);
	assert_int_equal(seen.installs, 1);
	assert_int_equal(seen.calls, 3);        /* missing, copy, again */
	assert_true(seen.text_seen);
	assert_int_equal(res.outcome, MSC__V1__EXEC_OUTCOME__EXITED);
	assert_int_equal(res.exit_code, 3);
	assert_int_equal(res.stdout.len, hl + sizeof(in) + 2);
	assert_memory_equal(res.stdout.data, want_head, hl);
	assert_memory_equal(res.stdout.data + hl, in, sizeof(in));
	assert_memory_equal(res.stdout.data + hl + sizeof(in), "\0\377", 2);
	assert_int_equal(access("owned", F_OK), -1);
	free(res.stdout.data);
	free(res.stderr.data);

	/* the copy is there now: one exec; no stdin: the helper reads none */
	seen = (struct seen){ .text_seen = true };
	res = (Msc__V1__ExecResult)MSC__V1__EXEC_RESULT__INIT;
	run(&text_copy, args, 2, NULL, 0, 1 << 20, &res, 0);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.installs, 0);
	assert_int_equal(res.stdout.len, strlen("[--file]\n") + 2);
	assert_memory_equal(res.stdout.data, "[--file]\n\0\377", res.stdout.len);
	free(res.stdout.data);
	free(res.stderr.data);
}

/* Decoded output past the request's limit is the output-limit outcome. */
static void
test_text_output_limit(void **state)
{
	char *args[] = { "/.msc-helper", "x" };
	uint8_t big[4096];
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;

	(void)state;
	memset(big, 0xaa, sizeof(big));
	run(&text_copy, args, 2, big, sizeof(big), 1000, &res, 0);
	assert_int_equal(res.outcome, MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT);
	assert_int_equal(res.stdout.len, 0);
	free(res.stdout.data);
	free(res.stderr.data);
}

/* Background processes are off where the exec is text-only: the
 * helper's --process mode is refused, not reached. */
static void
test_text_no_process(void **state)
{
	char *args[] = { "/.msc-helper", "--process", "start", "p1", "sleep",
		"100" };
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;

	(void)state;
	seen = (struct seen){ .text_seen = true };
	run(&text_copy, args, 6, NULL, 0, 1 << 20, &res, -EINVAL);
	assert_int_equal(seen.calls, 0);
	free(res.stdout.data);
	free(res.stderr.data);
}

/* Stdin that base64(1) cannot decode (cut short on the way): the helper
 * never runs (a file_write would commit a part), an error instead. */
static int
bad_stdin_exec(void *be, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *res, char *err, size_t errlen)
{
	Msc__V1__ExecRequest q = *req;

	if (req->has_stdin && !(req->n_args > 2 &&
	    strstr(req->args[2], "mktemp /tmp/.msc-helper") != NULL)) {
		q.stdin.data = (uint8_t *)"AAAA!!!!";
		q.stdin.len = 8;
	}
	return local_exec(be, &q, res, err, errlen);
}

static void
test_text_base64_failures(void **state)
{
	const struct msc_helper_copy bad = {
		.exec = bad_stdin_exec, .text_only = true,
	};
	char *args[] = { "/.msc-helper", "--file", "write", "/tmp/x", "0" };
	const uint8_t in[] = "the whole file";
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;
	char dir[] = "/tmp/msc-hc-path.XXXXXX", fake[128], path[4096];
	const char *old = getenv("PATH");
	FILE *f;

	(void)state;
	run(&bad, args, 5, in, sizeof(in) - 1, 1 << 20, &res, -EIO);
	assert_int_equal(res.stdout.len, 0);
	free(res.stdout.data);
	free(res.stderr.data);

	/* The encoder of the helper's stdout fails: an error too. */
	assert_non_null(mkdtemp(dir));
	snprintf(fake, sizeof(fake), "%s/base64", dir);
	assert_non_null(f = fopen(fake, "w"));
	fputs("#!/bin/sh\n[ \"$1\" = -w0 ] && { cat >/dev/null; exit 1; }\n"
	    "exec /usr/bin/base64 \"$@\"\n", f);
	fclose(f);
	assert_int_equal(chmod(fake, 0755), 0);
	snprintf(path, sizeof(path), "%s:%s", dir, old);
	setenv("PATH", path, 1);
	res = (Msc__V1__ExecResult)MSC__V1__EXEC_RESULT__INIT;
	run(&text_copy, args, 5, in, sizeof(in) - 1, 1 << 20, &res, -EIO);
	setenv("PATH", old, 1);
	free(res.stdout.data);
	free(res.stderr.data);
	unlink(fake);
	rmdir(dir);
}

/* A command that does not name the helper runs as asked; a raw backend
 * gets the helper's bytes as they are. */
static void
test_plain_and_raw(void **state)
{
	char *plain[] = { "/bin/sh", "-c", "printf 'a\\377'" };
	char *args[] = { "/.msc-helper", "y" };
	const uint8_t in[] = { 0xff, 0 };
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;

	(void)state;
	seen = (struct seen){ .text_seen = true };
	run(&text_copy, plain, 3, NULL, 0, 1 << 20, &res, 0);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(res.stdout.len, 2);
	assert_memory_equal(res.stdout.data, "a\377", 2);
	free(res.stdout.data);
	free(res.stderr.data);
	res = (Msc__V1__ExecResult)MSC__V1__EXEC_RESULT__INIT;
	seen = (struct seen){ .text_seen = true };
	run(&raw_copy, args, 2, in, sizeof(in), 1 << 20, &res, 0);
	assert_false(seen.text_seen);           /* the bytes as they are */
	assert_int_equal(res.exit_code, 3);
	assert_int_equal(res.stdout.len, strlen("[y]\n") + 2 + 2);
	assert_memory_equal(res.stdout.data, "[y]\n\377\0\0\377",
	    res.stdout.len);
	free(res.stdout.data);
	free(res.stderr.data);
}

static void
test_base64_encode(void **state)
{
	uint8_t all[256], *back;
	size_t blen;
	char *t;

	(void)state;
	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	for (size_t n = 0; n <= 256; n++) {
		assert_int_equal(msc_base64_encode(all, n, &t), 0);
		assert_int_equal(strlen(t), (n + 2) / 3 * 4);
		assert_int_equal(msc_base64_decode(t, strlen(t), &back, &blen),
		    0);
		assert_int_equal(blen, n);
		assert_memory_equal(back, all, n);
		free(back);
		free(t);
	}
	assert_int_equal(msc_base64_encode((const uint8_t *)"ab", 2, &t), 0);
	assert_string_equal(t, "YWI=");
	free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_round_trip),
		cmocka_unit_test(test_text_output_limit),
		cmocka_unit_test(test_plain_and_raw),
		cmocka_unit_test(test_base64_encode),
		cmocka_unit_test(test_text_base64_failures),
		cmocka_unit_test(test_text_no_process),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
