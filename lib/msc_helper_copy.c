/*
 * msc_helper_copy.c - the exec helper's plain-command modes on a
 * computer without its mount (see msc_helper_copy.h): the binary read
 * once from this host, its copy in the computer named by its digest, and
 * the edge's "/.msc-helper ARGS" run as that copy; for a text-only exec,
 * stdin and stdout as base64.
 */
#include "msc_helper_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "msc_base64.h"
#include "msc_log.h"
#include "msc_main.h"

/* What the edge runs (edge/tools_processes.c, edge/tools_files.c). */
#define HELPER_ARG0 "/.msc-helper"
#define HELPER_MAX (32u << 20)
#define MISSING_LINE "msc-helper: not in this sandbox\n"
/* What the text-only script says (exit 126) when base64(1) failed on the
 * helper's stdin or stdout: the call did not happen as asked. */
#define BASE64_LINE "msc-helper: base64 failed\n"
#define INSTALL_TIMEOUT_S 120
#define COUNT_TIMEOUT_S 10

/* The binary, read once and kept for the process's life. */
static pthread_mutex_t bin_mu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *bin;
static size_t bin_len;
static char bin_path[64];       /* in a computer: /tmp/.msc-helper-DIGEST */

static const char *
helper_source(const struct msc_helper_copy *hc)
{
	const char *cands[3];
	size_t n = 0;

	if (hc->build_path != NULL)
		cands[n++] = hc->build_path;
	if (hc->installed_path != NULL)
		cands[n++] = hc->installed_path;
	cands[n] = NULL;
	return msc_main_find_file("MSC_EXEC_HELPER", R_OK, cands);
}

/* Reads the whole file at path into a new buffer (*out owned by caller). */
static int
slurp(const char *path, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *b;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rv = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0)
		rv = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > HELPER_MAX)
		rv = -EFBIG;
	if (rv != 0 || (b = malloc((size_t)st.st_size)) == NULL) {
		close(fd);
		return rv != 0 ? rv : -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rv = n < 0 ? -errno : -EIO;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (rv != 0) {
		free(b);
		return rv;
	}
	*out = b;
	*len = got;
	return 0;
}

/* The binary and its path in a computer, loaded on first use (borrowed). */
static int
helper_binary(const struct msc_helper_copy *hc, const uint8_t **b,
    size_t *len, const char **path, char *err, size_t errlen)
{
	const char *src;
	int rv = 0;

	pthread_mutex_lock(&bin_mu);
	if (bin == NULL) {
		uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a 64 */

		if ((src = helper_source(hc)) == NULL)
			rv = -ENOENT;
		else
			rv = slurp(src, &bin, &bin_len);
		if (rv != 0)
			snprintf(err, errlen, "This driver cannot find the exec "
			    "helper (msc-exec-helper; MSC_EXEC_HELPER names it) "
			    "that background processes and the file tools copy "
			    "into a computer: %s", strerror(-rv));
		else {
			for (size_t i = 0; i < bin_len; i++)
				h = (h ^ bin[i]) * 0x100000001b3ull;
			snprintf(bin_path, sizeof(bin_path),
			    "/tmp/.msc-helper-%016" PRIx64, h);
		}
	}
	*b = bin;
	*len = bin_len;
	*path = bin_path;
	pthread_mutex_unlock(&bin_mu);
	return rv;
}

/* The bytes as base64 text, for a text-only exec (*out owned by caller). */
static int
encode(const uint8_t *b, size_t len, uint8_t **out, size_t *outlen)
{
	char *t;
	int rv = msc_base64_encode(b, len, &t);

	if (rv != 0)
		return rv;
	*out = (uint8_t *)t;
	*outlen = strlen(t);
	return 0;
}

/* Copies the helper into the computer, atomically (a rename in /tmp). */
static int
install(const struct msc_helper_copy *hc, void *be,
    const Msc__V1__ExecRequest *req, const uint8_t *b, size_t len,
    const char *path, char *err, size_t errlen)
{
	char *argv[] = { "/bin/sh", "-c", hc->text_only ?
		"umask 022 && t=$(mktemp /tmp/.msc-helper.XXXXXX) && "
		"base64 -d > \"$t\" && chmod 755 \"$t\" && mv -f \"$t\" \"$1\" "
		"|| { rm -f \"$t\"; exit 1; }" :
		"umask 022 && t=$(mktemp /tmp/.msc-helper.XXXXXX) && "
		"cat > \"$t\" && chmod 755 \"$t\" && mv -f \"$t\" \"$1\" || "
		"{ rm -f \"$t\"; exit 1; }", "sh", (char *)path };
	Msc__V1__ExecRequest q = MSC__V1__EXEC_REQUEST__INIT;
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;
	uint8_t *text = NULL;
	int rv;

	q.computer_id = req->computer_id;
	q.args = argv;
	q.n_args = 5;
	q.has_stdin = true;
	q.stdin.data = (uint8_t *)b;
	q.stdin.len = len;
	if (hc->text_only) {
		if ((rv = encode(b, len, &text, &q.stdin.len)) != 0)
			return rv;
		q.stdin.data = text;
	}
	q.timeout_s = INSTALL_TIMEOUT_S;
	q.output_limit = 64 * 1024;
	q.owner = req->owner;
	q.principal = req->principal;
	rv = hc->exec(be, &q, &res, err, errlen);
	free(text);
	if (rv == 0 && (res.outcome != MSC__V1__EXEC_OUTCOME__EXITED ||
	    res.exit_code != 0)) {
		snprintf(err, errlen, "Computer '%s': the exec helper could not "
		    "be copied into it (exit code %d): %.*s",
		    req->computer_id, res.exit_code,
		    (int)(res.stderr.len > 300 ? 300 : res.stderr.len),
		    res.stderr.len ? (const char *)res.stderr.data : "");
		rv = -EIO;
	}
	free(res.stdout.data);
	free(res.stderr.data);
	if (rv == 0)
		msc_log_info("exec helper copied into computer %s (%zu bytes)",
		    req->computer_id, len);
	return rv;
}

static bool
is_missing(const Msc__V1__ExecResult *res)
{
	size_t n = sizeof(MISSING_LINE) - 1;

	return res->outcome == MSC__V1__EXEC_OUTCOME__EXITED &&
	    res->exit_code == 127 && res->stderr.len == n &&
	    memcmp(res->stderr.data, MISSING_LINE, n) == 0;
}

/* Whether res is the text-only script's word that base64(1) failed. */
static bool
is_base64_failure(const Msc__V1__ExecResult *res)
{
	size_t n = sizeof(BASE64_LINE) - 1;

	return res->outcome == MSC__V1__EXEC_OUTCOME__EXITED &&
	    res->exit_code == 126 && res->stderr.len >= n &&
	    memcmp(res->stderr.data + res->stderr.len - n, BASE64_LINE,
		n) == 0;
}

/*
 * A text-only exec's result: stdout, base64 as the computer printed it,
 * decoded in place. A result that did not run to its end keeps no
 * output.
 */
static int
decode_stdout(const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *res,
    char *err, size_t errlen)
{
	const char *t = res->stdout.len ? (const char *)res->stdout.data : "";
	size_t n = res->stdout.len;
	uint8_t *bytes;
	size_t len;
	int rv;

	if (res->outcome != MSC__V1__EXEC_OUTCOME__EXITED || is_missing(res)) {
		free(res->stdout.data);
		res->stdout.data = NULL;
		res->stdout.len = 0;
		return 0;
	}
	if (is_base64_failure(res)) {
		snprintf(err, errlen, "Computer '%s': base64(1) failed on the "
		    "exec helper's input or output: nothing was done with a "
		    "part of it", req->computer_id);
		return -EIO;
	}
	while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r'))
		n--;
	if ((rv = msc_base64_decode(t, n, &bytes, &len)) != 0) {
		if (rv == -EINVAL)
			snprintf(err, errlen, "Computer '%s': the exec helper's "
			    "output did not come back as base64 (is base64(1) "
			    "in its image?)", req->computer_id);
		return rv == -EINVAL ? -EPROTO : rv;
	}
	if (len + res->stderr.len > req->output_limit && req->output_limit) {
		free(bytes);
		free(res->stdout.data);
		free(res->stderr.data);
		res->stdout.data = res->stderr.data = NULL;
		res->stdout.len = res->stderr.len = 0;
		res->outcome = MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT;
		res->exit_code = 1;
		return 0;
	}
	free(res->stdout.data);
	res->stdout.data = bytes;
	res->stdout.len = len;
	return 0;
}

/*
 * The script that runs the copy (sh -c SCRIPT msc-helper [IN] ARGS...),
 * or prints the missing line. For a text-only exec, IN is 1 when stdin
 * is base64 to decode (into a file first: the helper never runs on a
 * part of it), and the helper's stdout goes out as base64 while its exit
 * status comes back through fd 4, with an x after it when the encoder
 * failed; a failure of either base64 is the BASE64_LINE, exit 126.
 */
static void
run_script(const struct msc_helper_copy *hc, const char *path, char *buf,
    size_t len)
{
	int n = snprintf(buf, len, "h=%s; [ -x \"$h\" ] || { printf "
	    "'%%s\\n' '%.*s' >&2; exit 127; }; ", path,
	    (int)sizeof(MISSING_LINE) - 2, MISSING_LINE);

	if (!hc->text_only)
		snprintf(buf + n, len - (size_t)n, "exec \"$h\" \"$@\"");
	else
		snprintf(buf + n, len - (size_t)n, "b() { printf '%%s\\n' "
		    "'%.*s' >&2; exit 126; }; i=$1; shift; exec 3>&1; "
		    "f=/dev/null; if [ \"$i\" = 1 ]; then f=$(mktemp) && "
		    "base64 -d > \"$f\" || { rm -f \"$f\"; b; }; fi; "
		    "r=$( { { \"$h\" \"$@\" < \"$f\"; echo $? >&4; } | "
		    "base64 -w0 >&3 || echo x >&4; } 4>&1 ); "
		    "[ \"$i\" = 1 ] && rm -f \"$f\"; "
		    "case $r in *x*) b;; esac; exit \"${r:-1}\"",
		    (int)sizeof(BASE64_LINE) - 2, BASE64_LINE);
}

/* msc_helper_copy_exec, copying a missing helper in only when may_install
 * (else the missing line is the result). */
static int
helper_exec(const struct msc_helper_copy *hc, void *be,
    const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *res,
    bool may_install, char *err, size_t errlen)
{
	Msc__V1__ExecRequest q;
	const uint8_t *b;
	const char *path;
	char script[1024], **argv;
	uint8_t *text = NULL;
	size_t len, k = 0;
	int rv;

	if (req->n_args == 0 || strcmp(req->args[0], HELPER_ARG0) != 0)
		return hc->exec(be, req, res, err, errlen);
	if (hc->text_only && req->n_args > 1 &&
	    strcmp(req->args[1], "--process") == 0) {
		/* A process that leaves a text-only exec is not known to
		 * live on: background processes are off there. */
		snprintf(err, errlen, "Computer '%s': background processes "
		    "are off on this backend.", req->computer_id);
		return -EINVAL;
	}
	if ((rv = helper_binary(hc, &b, &len, &path, err, errlen)) != 0)
		return rv;
	run_script(hc, path, script, sizeof(script));
	if ((argv = calloc(req->n_args + 4, sizeof(char *))) == NULL)
		return -ENOMEM;
	argv[k++] = "/bin/sh";
	argv[k++] = "-c";
	argv[k++] = script;
	argv[k++] = "msc-helper";
	q = *req;               /* shallow: the strings stay the caller's */
	if (hc->text_only) {
		argv[k++] = req->has_stdin ? "1" : "0";
		if (req->has_stdin && (rv = encode(req->stdin.data,
		    req->stdin.len, &text, &q.stdin.len)) != 0) {
			free(argv);
			return rv;
		}
		q.stdin.data = text;
		/* base64 of output_limit bytes */
		if (req->output_limit > 0 && req->output_limit < (1ull << 60))
			q.output_limit = (req->output_limit + 2) / 3 * 4 + 4;
	}
	for (size_t i = 1; i < req->n_args; i++)
		argv[k++] = req->args[i];
	q.args = argv;
	q.n_args = k;
	rv = hc->exec(be, &q, res, err, errlen);
	if (rv == 0 && may_install && is_missing(res)) {
		free(res->stdout.data);
		free(res->stderr.data);
		res->stdout.data = res->stderr.data = NULL;
		res->stdout.len = res->stderr.len = 0;
		rv = install(hc, be, req, b, len, path, err, errlen);
		if (rv == 0)
			rv = hc->exec(be, &q, res, err, errlen);
	}
	if (rv == 0 && hc->text_only &&
	    (rv = decode_stdout(req, res, err, errlen)) != 0) {
		free(res->stdout.data);
		free(res->stderr.data);
		res->stdout.data = res->stderr.data = NULL;
		res->stdout.len = res->stderr.len = 0;
	}
	free(text);
	free(argv);
	return rv;
}

int
msc_helper_copy_exec(const struct msc_helper_copy *hc, void *be,
    const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *res, char *err,
    size_t errlen)
{
	return helper_exec(hc, be, req, res, true, err, errlen);
}

int
msc_helper_copy_processes(const struct msc_helper_copy *hc, void *be,
    const char *id)
{
	char *argv[] = { HELPER_ARG0, "--process", "list" };
	Msc__V1__ExecRequest q = MSC__V1__EXEC_REQUEST__INIT;
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;
	char err[256];
	json_t *root, *list, *row;
	size_t i;
	int rv, n = 0;

	q.computer_id = (char *)id;
	q.args = argv;
	q.n_args = 3;
	q.timeout_s = COUNT_TIMEOUT_S;
	q.output_limit = 4u << 20;
	rv = helper_exec(hc, be, &q, &res, false, err, sizeof(err));
	if (rv == 0 && is_missing(&res))
		rv = -ENOENT;           /* never copied in: none started */
	else if (rv == 0 && (res.outcome != MSC__V1__EXEC_OUTCOME__EXITED ||
	    res.exit_code != 0))
		rv = -EIO;
	root = rv == 0 ? json_loadb(res.stdout.len ? (const char *)
	    res.stdout.data : "", res.stdout.len, 0, NULL) : NULL;
	free(res.stdout.data);
	free(res.stderr.data);
	if (rv != 0)
		return rv;
	list = json_object_get(root, "processes");
	if (!json_is_array(list)) {
		json_decref(root);
		return -EPROTO;
	}
	json_array_foreach(list, i, row) {
		const char *state = json_string_value(json_object_get(row,
		    "state"));

		if (state != NULL && strcmp(state, "running") == 0)
			n++;
	}
	json_decref(root);
	return n;
}
