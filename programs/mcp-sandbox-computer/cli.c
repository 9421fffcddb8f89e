/*
 * cli.c - operator subcommands. Exit status: 0 done, 1 failed (message
 * on stderr), 2 usage error; exec exits with the command's own status
 * (124 on timeout). --json prints machine-readable output.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "drivers.h"
#include "driver.pb-c.h"
#include "msc_cfg.h"
#include "msc_log.h"
#include "msc_main.h"
#include "msc_rpc.h"
#include "msc_slug.h"

#define CLI_DRIVER_URL "inproc://msc-cli-driver"
#define CLI_TIMEOUT_MS 660000
#define CLI_MAX_STDIN (2u * 1024 * 1024)

static const char *const commands[] = { "ls", "create", "exec", "restart",
	"reset", "rm", "network", "network-log", NULL };

struct cli {
	const char *cmd;
	const char *id;
	const char *mode;               /* network ID MODE */
	const char *shell_command;      /* exec -c "..." */
	const char *workdir;            /* exec -w DIR */
	char **argv;                    /* exec -- ARGS... (borrowed) */
	int argc;
	bool json;
	bool temporary;
	bool read_stdin;                /* exec -i: pass our stdin */
	struct msc_cfg cfg;
	const struct driver_ops *ops;
	void *driver;
	struct msc_client *client;
};

bool
cli_is_command(int argc, char **argv)
{
	for (int i = 0; argc > 1 && commands[i] != NULL; i++)
		if (strcmp(argv[1], commands[i]) == 0)
			return true;
	return false;
}

static int
usage(void)
{
	fputs("usage: mcp-sandbox-computer ls [--json]\n"
	      "       mcp-sandbox-computer create [ID] [--temporary] [--json]\n"
	      "       mcp-sandbox-computer exec ID [-i] [-w DIR] [--json] "
	      "(-c 'SHELL COMMAND' | -- PROGRAM [ARGS...])\n"
	      "       mcp-sandbox-computer restart|reset|rm ID [--json]\n"
	      "       mcp-sandbox-computer network ID [none|allowlist|open] "
	      "[--network-allow DOMAINS] [--network-deny DOMAINS]\n"
	      "       mcp-sandbox-computer network-log [ID]\n"
	      "Any server flag (--image, --docker-host, --engine, --timeout, "
	      "--output-limit, --shell, --driver-url, ...) may follow.\n",
	    stderr);
	return 2;
}

/* Splits our options from the server flags; returns -1 or an exit code. */
static int
parse(struct cli *c, int argc, char **argv)
{
	char **rest = calloc((size_t)argc + 1, sizeof(*rest));
	int nrest = 1, rv;

	if (rest == NULL)
		return 1;
	rest[0] = argv[0];
	c->cmd = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			c->argv = argv + i + 1;
			c->argc = argc - i - 1;
			break;
		} else if (strcmp(a, "--json") == 0)
			c->json = true;
		else if (strcmp(a, "--temporary") == 0)
			c->temporary = true;
		else if (strcmp(a, "-i") == 0)
			c->read_stdin = true;
		else if ((strcmp(a, "-c") == 0 || strcmp(a, "-w") == 0) &&
		    i + 1 < argc)
			*(a[1] == 'c' ? &c->shell_command : &c->workdir) =
			    argv[++i];
		else if (a[0] == '-') {
			rest[nrest++] = argv[i];
			/* A flag's value travels with it. */
			if (strchr(a, '=') == NULL && i + 1 < argc &&
			    argv[i + 1][0] != '-' && strcmp(a, "--network") &&
			    strcmp(a, "--no-network") &&
			    strcmp(a, "--allow-unauthenticated-http"))
				rest[nrest++] = argv[++i];
		} else if (c->id == NULL)
			c->id = a;
		else if (c->mode == NULL && strcmp(c->cmd, "network") == 0)
			c->mode = a;
		else {
			free(rest);
			return usage();
		}
	}
	rv = msc_cfg_parse(&c->cfg, &drivers_program, nrest, rest);
	free(rest);
	if (rv == MSC_CFG_EXIT_HELP)
		return 0;
	if (rv != 0)
		return 2;
	if (msc_main_check_transport(&c->cfg) != 0 ||
	    (c->ops = drivers_find(&c->cfg)) == NULL)
		return 1;
	if (strcmp(c->cmd, "ls") != 0 && strcmp(c->cmd, "create") != 0 &&
	    strcmp(c->cmd, "network-log") != 0 && c->id == NULL)
		return usage();
	if (strcmp(c->cmd, "exec") == 0 &&
	    (c->shell_command == NULL) == (c->argc == 0))
		return usage();
	return -1;
}

static int
connect_driver(struct cli *c)
{
	const char *url;
	char id[64], role[96];

	/* The first --driver-url, else a driver of our own in-process. */
	if (msc_cfg_driver(&c->cfg, 0, id, sizeof(id), &url) != 0) {
		if ((c->ops->start_tool != NULL ? c->ops->start_tool :
		    c->ops->backend->start)(&c->cfg, CLI_DRIVER_URL,
		    &c->driver) != 0)
			return 1;
		snprintf(id, sizeof(id), "%s", c->cfg.driver_id);
		url = CLI_DRIVER_URL;
	}
	/* Over tls+tcp:// the driver's certificate must name that id. */
	snprintf(role, sizeof(role), "driver:%s", id);
	if (msc_client_open(url, role, &c->client) != 0) {
		msc_cfg_error("invalid --driver-url '%s'", url);
		return 1;
	}
	return -1;
}

/* One blocking driver call; prints the error and returns 1 on failure. */
static int
call(struct cli *c, const char *method, const ProtobufCMessage *req,
    int timeout_ms, ProtobufCMessage **respp)
{
	char msg[4096];
	Msc__V1__Code code;

	code = msc_client_call_sync(c->client, &msc__v1__driver__descriptor,
	    method, req, timeout_ms, respp, msg, sizeof(msg));
	if (code == MSC__V1__CODE__OK)
		return 0;
	if (c->json) {
		json_t *e = json_pack("{s:s}", "error", msg);

		json_dumpf(e, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(e);
	}
	fprintf(stderr, "mcp-sandbox-computer: %s\n", msg);
	return 1;
}

static json_t *
computer_json(const Msc__V1__Computer *m)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s}", "computer_id",
	    m->computer_id, "sandbox_id", m->sandbox_id, "backend", m->backend,
	    "state", m->state, "temporary", m->temporary, "image", m->image,
	    "created_at", m->created_at);
}

static void
print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(j);
}

static int
cmd_ls(struct cli *c)
{
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	Msc__V1__ComputerList *l;
	ProtobufCMessage *resp;

	if (call(c, "List", &e.base, 60000, &resp) != 0)
		return 1;
	l = (Msc__V1__ComputerList *)resp;
	if (c->json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < l->n_computers; i++)
			json_array_append_new(arr,
			    computer_json(l->computers[i]));
		print_json(json_pack("{s:o, s:I}", "computers", arr, "count",
		    (json_int_t)l->n_computers));
	} else {
		printf("%-32s %-10s %-10s %-12s %s\n", "COMPUTER ID", "MODE",
		    "STATE", "SANDBOX ID", "IMAGE");
		for (size_t i = 0; i < l->n_computers; i++) {
			const Msc__V1__Computer *m = l->computers[i];

			printf("%-32s %-10s %-10s %-12s %s\n", m->computer_id,
			    m->temporary ? "temporary" : "permanent", m->state,
			    m->sandbox_id, m->image);
		}
	}
	protobuf_c_message_free_unpacked(resp, NULL);
	return 0;
}

/* create, restart, reset: print the computer. */
static int
cmd_computer(struct cli *c, const char *method)
{
	Msc__V1__CreateRequest cr = MSC__V1__CREATE_REQUEST__INIT;
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	char id[MSC_SLUG_MAX + 1];
	ProtobufCMessage *resp;
	Msc__V1__Computer *m;

	if (c->id == NULL)
		msc_slug_random(id);
	else if (msc_slug_normalize(c->id, id) != 0) {
		fprintf(stderr, "mcp-sandbox-computer: %s\n", MSC_SLUG_ERROR);
		return 1;
	}
	cr.computer_id = ref.computer_id = id;
	cr.temporary = c->temporary;
	if (call(c, method, strcmp(method, "Create") == 0 ? &cr.base
							   : &ref.base,
		CLI_TIMEOUT_MS, &resp) != 0)
		return 1;
	m = (Msc__V1__Computer *)resp;
	if (c->json)
		print_json(computer_json(m));
	else
		printf("%s\n", m->computer_id);
	protobuf_c_message_free_unpacked(resp, NULL);
	return 0;
}

static int
cmd_rm(struct cli *c)
{
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	ProtobufCMessage *resp;

	ref.computer_id = (char *)c->id;
	if (call(c, "Delete", &ref.base, 60000, &resp) != 0)
		return 1;
	protobuf_c_message_free_unpacked(resp, NULL);
	if (c->json)
		print_json(json_pack("{s:b, s:s, s:b}", "ok", 1, "computer_id",
		    c->id, "deleted", 1));
	else
		printf("%s\n", c->id);
	return 0;
}

static int
read_all_stdin(ProtobufCBinaryData *out)
{
	size_t cap = 65536;
	uint8_t *buf = malloc(cap);
	ssize_t n;

	out->len = 0;
	while (buf != NULL && (n = read(STDIN_FILENO, buf + out->len,
				   cap - out->len)) > 0) {
		out->len += (size_t)n;
		if (out->len > CLI_MAX_STDIN)
			break;
		if (out->len == cap) {
			uint8_t *grown = realloc(buf, cap *= 2);

			if (grown == NULL)
				break;
			buf = grown;
		}
	}
	out->data = buf;
	if (buf == NULL || out->len > CLI_MAX_STDIN) {
		fprintf(stderr, "mcp-sandbox-computer: stdin is over the 2 MiB "
				"limit\n");
		return 1;
	}
	return 0;
}

static int
cmd_exec(struct cli *c)
{
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;
	Msc__V1__ExecResult *r;
	ProtobufCMessage *resp;
	int status;

	ref.computer_id = er.computer_id = (char *)c->id;
	/* The computer must be running: start it if it was stopped. */
	if (call(c, "Attach", &ref.base, CLI_TIMEOUT_MS, &resp) != 0)
		return 1;
	protobuf_c_message_free_unpacked(resp, NULL);
	if (c->shell_command != NULL)
		er.command = (char *)c->shell_command;
	er.args = c->argv;
	er.n_args = (size_t)c->argc;
	er.working_directory = (char *)(c->workdir ? c->workdir : "");
	er.timeout_s = (uint32_t)c->cfg.timeout;
	er.output_limit = (uint64_t)c->cfg.output_limit;
	if (c->read_stdin) {
		if (read_all_stdin(&er.stdin) != 0) {
			free(er.stdin.data);
			return 1;
		}
		er.has_stdin = er.stdin.len > 0;
	}
	status = call(c, "Exec", &er.base, (int)er.timeout_s * 1000 + 60000,
	    &resp);
	free(er.stdin.data);
	if (status != 0)
		return 1;
	r = (Msc__V1__ExecResult *)resp;
	status = r->outcome == MSC__V1__EXEC_OUTCOME__TIMED_OUT ? 124
	    : r->outcome == MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT ? 1
								: r->exit_code;
	if (c->json)
		print_json(json_pack("{s:s, s:s%, s:s%, s:i, s:I, s:s}",
		    "computer_id", c->id, "stdout",
		    r->stdout.len ? (char *)r->stdout.data : "", r->stdout.len,
		    "stderr", r->stderr.len ? (char *)r->stderr.data : "",
		    r->stderr.len, "exit_code", status, "exec_duration_ms",
		    (json_int_t)r->duration_ms, "outcome",
		    r->outcome == MSC__V1__EXEC_OUTCOME__TIMED_OUT ? "timeout"
		    : r->outcome == MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT
			? "output_limit"
			: "exited"));
	else {
		if (r->stdout.len > 0)
			fwrite(r->stdout.data, 1, r->stdout.len, stdout);
		if (r->stderr.len > 0)
			fwrite(r->stderr.data, 1, r->stderr.len, stderr);
		if (r->outcome == MSC__V1__EXEC_OUTCOME__TIMED_OUT)
			fprintf(stderr, "[kilntainers: command timed out after "
					"%lds]\n", c->cfg.timeout);
		else if (r->outcome == MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT)
			fprintf(stderr, "[kilntainers: output limit exceeded "
					"(%ld bytes). Command terminated.]\n",
			    c->cfg.output_limit);
	}
	protobuf_c_message_free_unpacked(resp, NULL);
	return status;
}

int
cli_main(int argc, char **argv)
{
	struct cli c = { 0 };
	int status;

	msc_log_init("mcp-sandbox-computer");
	if ((status = parse(&c, argc, argv)) >= 0)
		goto out;
	if (strcmp(c.cmd, "network-log") == 0) {
		status = cli_network_log(c.ops, c.id);
		goto out;
	}
	if ((status = connect_driver(&c)) >= 0)
		goto out;
	if (strcmp(c.cmd, "ls") == 0)
		status = cmd_ls(&c);
	else if (strcmp(c.cmd, "create") == 0)
		status = cmd_computer(&c, "Create");
	else if (strcmp(c.cmd, "restart") == 0)
		status = cmd_computer(&c, "Restart");
	else if (strcmp(c.cmd, "reset") == 0)
		status = cmd_computer(&c, "Reset");
	else if (strcmp(c.cmd, "rm") == 0)
		status = cmd_rm(&c);
	else if (strcmp(c.cmd, "network") == 0)
		status = cli_network(c.ops, c.driver, c.id, c.mode);
	else
		status = cmd_exec(&c);
	fflush(stdout);
out:
	msc_client_close(c.client);
	if (c.driver != NULL)
		c.ops->backend->stop(c.driver);
	msc_cfg_fini(&c.cfg);
	return status;
}
