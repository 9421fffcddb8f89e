/*
 * wasm_exec.c - one command in a wasm computer: a runner child process
 * (host/) with pipes for stdin, stdout, stderr and a status line on fd 3.
 * The driver enforces the deadline and the output limit by killing the
 * child; the runner enforces memory and fuel inside. Above the computers
 * (wasm_computers.c), where the child is tracked while it runs.
 */
#include "wasm_driver_int.h"
#include "wasm_runner.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "msc_driver.h"
#include "msc_driver_live.h"
#include "msc_time.h"

#define STATUS_MAX 1024
#define READ_CHUNK 65536

/* Pipes to the child: our ends, made non-blocking. */
struct wasm_child {
	pid_t pid;
	int in, out, err, status;
	uint8_t *obuf, *ebuf;
	size_t olen, elen, limit;
	char status_line[STATUS_MAX];
	size_t slen;
	bool over;
	bool cancelled;         /* Driver/Cancel (msc_driver_live.h) */
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The guest's argv for a request, or -EINVAL with a message. */
static int
guest_argv(struct wasm_driver *d, const Msc__V1__ExecRequest *r,
    const char **argv, size_t max, size_t *n, char *err, size_t errlen)
{
	size_t i = 0;

	argv[i++] = d->module_name;
	if (r->n_args > 0) {
		if (r->n_args + 1 > max)
			return -E2BIG;
		for (size_t k = 0; k < r->n_args; k++)
			argv[i++] = r->args[k];
	} else if (d->shell_mode) {
		argv[i++] = d->module_so == NULL ? "sh" : d->cfg->shell;
		argv[i++] = "-c";
		argv[i++] = r->command;
	} else {
		snprintf(err, errlen, "This WASM backend does not support "
		    "command mode (no shell configured). Pass args with the "
		    "module's command line instead, or start the server with "
		    "--shell naming the module's shell command.");
		return -EINVAL;
	}
	*n = i;
	return 0;
}

static int
spawn_runner(struct wasm_driver *d, const Msc__V1__ExecRequest *r,
    struct wasm_child *c, char *err, size_t errlen)
{
	char root[4096], mem[32], fuel[32], quota[32];
	const char *argv[32 + 256 + 4], *gargv[256 + 4];
	struct wasm_runner run;
	size_t n = 0, gn = 0;
	int rv;

	if ((rv = guest_argv(d, r, gargv, 256, &gn, err, errlen)) != 0) {
		if (rv == -E2BIG)
			snprintf(err, errlen, "too many args (at most 255)");
		return rv;
	}
	if ((rv = wasm_computer_root(d, r->computer_id, root,
		 sizeof(root))) != 0)
		return rv;
	snprintf(mem, sizeof(mem), "%ld", d->max_memory_mib);
	argv[n++] = d->runner;
	argv[n++] = "--root";
	argv[n++] = root;
	argv[n++] = "--cwd";
	argv[n++] = r->working_directory != NULL &&
		*r->working_directory != '\0' ? r->working_directory : "/";
	argv[n++] = "--max-memory-mib";
	argv[n++] = mem;
	argv[n++] = "--status-fd";
	argv[n++] = "3";
	if (d->fuel > 0) {
		snprintf(fuel, sizeof(fuel), "%lld", d->fuel);
		argv[n++] = "--fuel";
		argv[n++] = fuel;
	}
	if (d->disk_quota > 0) {
		snprintf(quota, sizeof(quota), "%llu",
		    (unsigned long long)d->disk_quota);
		argv[n++] = "--disk-quota";
		argv[n++] = quota;
	}
	if (d->module_so != NULL) {
		argv[n++] = "--module";
		argv[n++] = d->module_so;
	}
	argv[n++] = "--";
	for (size_t i = 0; i < gn; i++)
		argv[n++] = gargv[i];
	argv[n] = NULL;
	if ((rv = wasm_runner_start(d, (char *const *)argv, &run, err,
		 errlen)) != 0)
		return rv;
	c->pid = run.pid;
	c->in = run.in;
	c->out = run.out;
	c->err = run.err;
	c->status = run.status;
	return 0;
}

/* Appends what fd has to buf within the shared output limit. */
static void
drain(struct wasm_child *c, int *fd, uint8_t **buf, size_t *len)
{
	uint8_t chunk[READ_CHUNK];
	ssize_t got = read(*fd, chunk, sizeof(chunk));

	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (got <= 0) {
		close_fd(fd);
		return;
	}
	if (c->olen + c->elen + (size_t)got > c->limit) {
		c->over = true;
		return;
	}
	uint8_t *n = realloc(*buf, *len + (size_t)got);

	if (n == NULL) {
		c->over = true;
		return;
	}
	memcpy(n + *len, chunk, (size_t)got);
	msc_driver_output(chunk, (size_t)got);
	*buf = n;
	*len += (size_t)got;
}

static void
read_status(struct wasm_child *c)
{
	ssize_t got = read(c->status, c->status_line + c->slen,
	    sizeof(c->status_line) - 1 - c->slen);

	if (got < 0 && errno == EINTR)
		return;
	if (got <= 0 || (c->slen += (size_t)got) >= sizeof(c->status_line) - 1)
		close_fd(&c->status);
	c->status_line[c->slen] = '\0';
}

/* Feeds stdin, collects output; false when the deadline passed. */
static bool
pump(struct wasm_child *c, const ProtobufCBinaryData *in, uint64_t deadline)
{
	size_t sent = 0;
	int cancel_fd = msc_driver_cancel_fd();

	if (in == NULL || in->len == 0)
		close_fd(&c->in);
	while (c->out >= 0 || c->err >= 0 || c->status >= 0) {
		struct pollfd p[5];
		int np = 0, ms;
		uint64_t now = msc_now_ms();

		if (c->over)
			return true;
		if (now >= deadline)
			return false;
		ms = deadline - now > 1000 ? 1000 : (int)(deadline - now);
		if (c->in >= 0)
			p[np++] = (struct pollfd){ c->in, POLLOUT, 0 };
		if (c->out >= 0)
			p[np++] = (struct pollfd){ c->out, POLLIN, 0 };
		if (c->err >= 0)
			p[np++] = (struct pollfd){ c->err, POLLIN, 0 };
		if (c->status >= 0)
			p[np++] = (struct pollfd){ c->status, POLLIN, 0 };
		if (cancel_fd >= 0)
			p[np++] = (struct pollfd){ cancel_fd, POLLIN, 0 };
		if (poll(p, (nfds_t)np, ms) < 0 && errno != EINTR)
			return true;
		if (cancel_fd >= 0 && p[np - 1].revents != 0) {
			c->cancelled = true;
			return true;
		}
		for (int i = 0; i < np; i++) {
			if (p[i].revents == 0)
				continue;
			if (p[i].fd == c->in) {
				ssize_t w = write(c->in, in->data + sent,
				    in->len - sent);

				if (w < 0 && errno != EAGAIN && errno != EINTR)
					close_fd(&c->in);
				else if (w > 0 && (sent += (size_t)w) == in->len)
					close_fd(&c->in);
			} else if (p[i].fd == c->out)
				drain(c, &c->out, &c->obuf, &c->olen);
			else if (p[i].fd == c->err)
				drain(c, &c->err, &c->ebuf, &c->elen);
			else if (p[i].fd == c->status)
				read_status(c);
		}
	}
	return true;
}

/*
 * Whether the runner has told its whole outcome: its pipes at EOF and a
 * whole status line that outcome() reads without the wait status.
 */
static bool
told(const struct wasm_child *c)
{
	static const char *const known[] = { "fuel\n", "trap", "error " };
	int code;

	if (c->out >= 0 || c->err >= 0 || c->status >= 0 ||
	    strchr(c->status_line, '\n') == NULL)
		return false;
	if (sscanf(c->status_line, "exit %d", &code) == 1)
		return true;
	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (strncmp(c->status_line, known[i], strlen(known[i])) == 0)
			return true;
	return false;
}

/* Reads the runner's status line into the result, or fails. */
static int
outcome(struct wasm_child *c, int wstatus, Msc__V1__ExecResult *res,
    char *err, size_t errlen)
{
	char *nl = strchr(c->status_line, '\n');
	int code;

	if (nl != NULL)
		*nl = '\0';
	if (sscanf(c->status_line, "exit %d", &code) == 1) {
		res->exit_code = code;
		return 0;
	}
	if (strcmp(c->status_line, "fuel") == 0) {
		res->outcome = MSC__V1__EXEC_OUTCOME__TIMED_OUT;
		res->exit_code = 124;
		return 0;
	}
	if (strncmp(c->status_line, "trap", 4) == 0) {
		res->exit_code = 1;
		return 0;
	}
	if (strncmp(c->status_line, "error ", 6) == 0) {
		snprintf(err, errlen, "%s", c->status_line + 6);
		return -EIO;
	}
	snprintf(err, errlen, "the wasm runner ended without a status (%s "
	    "%d)", WIFSIGNALED(wstatus) ? "signal" : "exit status",
	    WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
	return -EIO;
}

int
wasm_exec(struct wasm_driver *d, const Msc__V1__ExecRequest *r,
    Msc__V1__ExecResult *res, char *err, size_t errlen)
{
	struct wasm_child c = { .in = -1, .out = -1, .err = -1,
		.status = -1 };
	struct wasm_running w = { 0 };
	uint64_t start = msc_now_ms(), deadline;
	bool in_time;
	int rv, wstatus = 0;

	if (!wasm_exists(d, r->computer_id)) {
		return msc_driver_died(err, errlen, r->computer_id,
		    "its folder is gone.");
	}
	c.limit = r->output_limit;
	deadline = start + (uint64_t)r->timeout_s * 1000;
	if ((rv = spawn_runner(d, r, &c, err, errlen)) != 0)
		return rv;
	w.pid = c.pid;
	wasm_running_track(d, r->computer_id, &w);
	in_time = pump(&c, r->has_stdin ? &r->stdin : NULL, deadline);
	if (!in_time || c.over || c.cancelled)
		kill(c.pid, SIGKILL);
	wasm_running_untrack(d, r->computer_id);
	/* With its whole outcome read, the runner's exit need not be
	 * waited for (its status tells nothing more). */
	if (in_time && !c.over && !c.cancelled && told(&c))
		wasm_runner_reap(d, c.pid);
	else
		while (waitpid(c.pid, &wstatus, 0) < 0 && errno == EINTR)
			;
	res->outcome = MSC__V1__EXEC_OUTCOME__EXITED;
	if (w.ended) {
		snprintf(err, errlen, "Computer '%s' was stopped while the "
		    "command ran.", r->computer_id);
		rv = -ECONNABORTED;
	} else if (c.cancelled) {
		snprintf(err, errlen, "Computer '%s': the command was cancelled "
		    "and killed.", r->computer_id);
		rv = -ECANCELED;
	} else if (c.over) {
		res->outcome = MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT;
		res->exit_code = 1;
	} else if (!in_time) {
		res->outcome = MSC__V1__EXEC_OUTCOME__TIMED_OUT;
		res->exit_code = 124;
	} else {
		if (c.status >= 0)
			read_status(&c);
		rv = outcome(&c, wstatus, res, err, errlen);
	}
	if (rv == 0 && res->outcome == MSC__V1__EXEC_OUTCOME__EXITED) {
		res->stdout.data = c.obuf;
		res->stdout.len = c.olen;
		res->stderr.data = c.ebuf;
		res->stderr.len = c.elen;
		c.obuf = c.ebuf = NULL;
	}
	free(c.obuf);
	free(c.ebuf);
	close_fd(&c.in);
	close_fd(&c.out);
	close_fd(&c.err);
	close_fd(&c.status);
	res->duration_ms = msc_now_ms() - start;
	return rv;
}
