/*
 * modal_exec.c - the Exec op: the agent's command on a computer's
 * sandbox (modal_run.c), marked with a random KILNTAINERS_EXEC value. On
 * timeout, overflow or Driver/Cancel every process carrying the marker is
 * killed by a second exec (the router's timeout_secs is the backstop; it
 * has no kill call); a sandbox gone under the command is a computer that
 * died.
 */
#include "modal_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_helper_copy.h"
#include "msc_driver.h"
#include "msc_log.h"
#include "msc_random.h"
#include "msc_time.h"

/* Kills every process that carries the marker. */
static void
sweep(struct modal_driver *d, struct modal_known *k, const char *marker)
{
	const char *argv[] = { "/bin/sh", "-c", msc_driver_sweep_sh, "kt",
		marker };
	struct modal_run r;
	char err[MODAL_ERRLEN];

	if (modal_exec_argv(d, k, argv, 5, 15, &r, err, sizeof(err)) != 0)
		msc_log_warn("modal: cannot sweep a command on sandbox %s: %s",
		    k->sandbox_id, err);
	modal_run_fini(&r);
}

static int
exec_direct(void *be, const Msc__V1__ExecRequest *q,
    Msc__V1__ExecResult *res, char *err, size_t errlen)
{
	struct modal_driver *d = be;
	struct modal_known k;
	struct modal_run r = { 0 };
	const char *shell_argv[3], *const *argv;
	char marker[33];
	size_t argc;
	uint64_t start = msc_now_ms();
	uint32_t timeout_s = q->timeout_s;
	bool started = false;
	int64_t jwt_exp;
	int rv;

	if ((rv = modal_lookup(d, q->computer_id, &k, err, errlen)) != 0) {
		if (rv == -ENOENT || rv == -ECONNABORTED) {
			return msc_driver_died(err, errlen, q->computer_id,
			    "its Modal sandbox is gone. The next call starts "
			    "it again.");
		}
		return rv;
	}
	msc_random_hex(marker, 16);
	jwt_exp = k.jwt_exp;
	if (q->n_args > 0) {
		argv = (const char *const *)q->args;
		argc = q->n_args;
	} else {
		shell_argv[0] = d->cfg->shell;
		shell_argv[1] = "-c";
		shell_argv[2] = q->command;
		argv = shell_argv;
		argc = 3;
	}
	rv = modal_run_command(d, &k, argv, argc, q->working_directory,
	    marker, q->has_stdin ? &q->stdin : NULL, timeout_s,
	    q->output_limit, &r, &started, err, errlen);
	res->outcome = MSC__V1__EXEC_OUTCOME__EXITED;
	if (rv == 0 && r.cancelled) {
		sweep(d, &k, marker);
		snprintf(err, errlen, "Computer '%s': the command was cancelled "
		    "and killed.", q->computer_id);
		rv = -ECANCELED;
	} else if (rv == 0 && r.exited && !r.over) {
		res->exit_code = r.exit_code;
		res->stdout.data = (uint8_t *)r.out;
		res->stdout.len = r.olen;
		res->stderr.data = (uint8_t *)r.err;
		res->stderr.len = r.elen;
		r.out = r.err = NULL;
	} else if (rv == 0) {
		sweep(d, &k, marker);
		res->outcome = r.over ? MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT
				      : MSC__V1__EXEC_OUTCOME__TIMED_OUT;
		res->exit_code = r.over ? 1 : 124;
	} else if (rv != -EACCES && rv != -EINVAL && rv != -ENOMEM) {
		/* Failed under way: a dead sandbox, or a broken router. */
		int died = modal_died(d, q->computer_id, k.sandbox_id, err,
		    errlen);

		if (died != 0)
			rv = died;
		else {
			if (started)
				sweep(d, &k, marker);
			if (rv != -ETIMEDOUT)
				rv = -EIO;
		}
	}
	if (rv != -ECONNABORTED && k.jwt_exp != jwt_exp)
		modal_remember(d, q->computer_id, &k);   /* a renewed JWT */
	modal_run_fini(&r);
	explicit_bzero(&k, sizeof(k));
	res->duration_ms = msc_now_ms() - start;
	return rv;
}

/* How the exec helper reaches a sandbox (lib/msc_helper_copy.c). */
static const struct msc_helper_copy helper_copy = {
	.exec = exec_direct,
	.build_path = MSC_HELPER_COPY_BUILD_PATH,
	.installed_path = MSC_HELPER_COPY_INSTALLED_PATH,
};

/* The agent's command, or the exec helper's mode (msc_helper_copy.c). */
int
modal_exec(struct modal_driver *d, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *res, char *err, size_t errlen)
{
	return msc_helper_copy_exec(&helper_copy, d, req, res, err, errlen);
}

int
modal_processes(void *be, const char *id)
{
	return msc_helper_copy_processes(&helper_copy, be, id);
}
