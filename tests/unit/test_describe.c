/*
 * test_describe.c - the tool description comes from the driver: each
 * backend's text from its configuration, Driver/Describe over inproc://,
 * Session/Describe passing the driver's answer on, and the edge fetching
 * it in the background.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "docker_cfg.h"
#include "driver.pb-c.h"
#include "drivers.h"
#include "e2b_cfg.h"
#include "fly_cfg.h"
#include "modal_cfg.h"
#include "edge_desc.h"
#include "msc_cfg.h"
#include "msc_driver.h"
#include "msc_fleet.h"
#include "msc_rpc.h"
#include "session.h"
#include "session.pb-c.h"
#include "wasm_cfg.h"

#define URL_DRIVER "inproc://test-describe-driver"
#define URL_INVENTORY "inproc://test-describe-inventory"
#define URL_SESSION "inproc://test-describe-session"

static void
base_cfg(struct msc_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->shell = "/bin/sh";
	cfg->timeout = 77;
}

static void
has(char *text, const char *a, const char *b)
{
	assert_non_null(text);
	assert_non_null(strstr(text, a));
	assert_non_null(strstr(text, b));
	assert_non_null(strstr(text, "77 seconds"));
	free(text);
}

/* The description of the backend that args (after "--shell /bin/sh
 * --timeout 77") name, as the all-in-one parses and describes them. */
static char *
text_of(const char *const *args)
{
	char *argv[16] = { "kilntainers", "--shell", "/bin/sh", "--timeout",
		"77" };
	int argc = 5;
	struct msc_cfg cfg;
	char *text = NULL;

	while (*args != NULL && argc < 15)
		argv[argc++] = (char *)*args++;
	assert_int_equal(msc_cfg_parse(&cfg, &drivers_program, argc, argv), 0);
	assert_int_equal(msc_cfg_validate(&cfg), 0);
	/* The driver skeleton's describe: the backend's own text. */
	if (strcmp(cfg.backend, "docker") == 0)
		text = dock_cfg_describe(&cfg);
	else if (strcmp(cfg.backend, "fly") == 0)
		text = fly_cfg_describe(&cfg);
	else if (strcmp(cfg.backend, "e2b") == 0)
		text = e2b_cfg_describe(&cfg);
	else if (strcmp(cfg.backend, "modal") == 0)
		text = modal_cfg_describe(&cfg);
	else
		text = wasm_cfg_describe(&cfg);
	msc_cfg_fini(&cfg);
	return text;
}

/* Each backend's own words, with its image, shell and timeout. */
static void
backend_texts(void **state)
{
	(void)state;
	has(text_of((const char *[]){ NULL }), "Debian Linux sandbox",
	    "run in sh.");
	has(text_of((const char *[]){ "--image", "alpine:3", NULL }),
	    "container image alpine:3", "in sh ");
	has(text_of((const char *[]){ "--backend", "fly", "--fly-image",
	    "ubuntu:24.04", NULL }), "remote ubuntu:24.04 Fly Machine", "sh");
	has(text_of((const char *[]){ "--backend", "e2b", NULL }), "(E2B)",
	    "run in sh.");
	assert_null(text_of((const char *[]){ "--backend", "e2b",
	    "--e2b-template", "mine", NULL }));
	has(text_of((const char *[]){ "--backend", "modal", NULL }), "(Modal)",
	    "Debian Linux");
	has(text_of((const char *[]){ "--backend", "go_busybox", NULL }),
	    "WebAssembly", "md5sum");
	has(text_of((const char *[]){ "--backend", "wasm", "--wasm-path",
	    "/opt/tool.wasm", NULL }), "program, /opt/tool.wasm,", "command "
	    "runs a line");
}

/* --- Driver/Describe and Session/Describe -------------------------------- */

struct fake_driver {
	const struct msc_cfg *cfg;
};

static int
no_exec(void *be, const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *out,
    char *err, size_t errlen)
{
	(void)be;
	(void)req;
	(void)out;
	snprintf(err, errlen, "no");
	return -EINVAL;
}

static char *
describe_docker(void *be)
{
	return dock_cfg_describe(((struct fake_driver *)be)->cfg);
}

static const struct msc_driver_ops describing_ops = {
	.name = "fake-driver",
	.exec = no_exec,
	.code = msc_driver_code,
	.describe = describe_docker,
};

static const struct msc_driver_ops silent_ops = {
	.name = "fake-driver",
	.exec = no_exec,
	.code = msc_driver_code,
};

static void
driver_describe(void **state)
{
	struct msc_cfg cfg;
	struct fake_driver be = { &cfg };
	struct msc_driver *drv;
	struct msc_client *cli;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	ProtobufCMessage *resp = NULL;
	char msg[256];

	(void)state;
	base_cfg(&cfg);
	assert_int_equal(msc_driver_start(URL_DRIVER, &describing_ops, &be, 2,
	    &drv), 0);
	assert_int_equal(msc_client_open(URL_DRIVER, NULL, &cli), 0);
	assert_int_equal(msc_client_call_sync(cli, &msc__v1__driver__descriptor,
	    "Describe", &e.base, 5000, &resp, msg, sizeof(msg)),
	    MSC__V1__CODE__OK);
	has(strdup(((Msc__V1__ToolDescription *)resp)->text), "Debian",
	    "run in sh.");
	protobuf_c_message_free_unpacked(resp, NULL);
	msc_client_close(cli);
	assert_true(msc_driver_stop(drv));

	/* A backend without a description says so; it does not crash. */
	assert_int_equal(msc_driver_start(URL_DRIVER, &silent_ops, &be, 2,
	    &drv), 0);
	assert_int_equal(msc_client_open(URL_DRIVER, NULL, &cli), 0);
	assert_int_equal(msc_client_call_sync(cli, &msc__v1__driver__descriptor,
	    "Describe", &e.base, 5000, &resp, msg, sizeof(msg)),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_non_null(strstr(msg, "no tool description"));
	msc_client_close(cli);
	assert_true(msc_driver_stop(drv));
}

/* The session asks its first driver and passes the text on. */
static void
session_describe(void **state)
{
	struct msc_cfg cfg;
	struct fake_driver be = { &cfg };
	struct msc_driver *drv;
	struct msc_fleet *fleet;
	struct sess_service *sess;
	struct msc_client *cli;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	ProtobufCMessage *resp = NULL;
	char msg[256];

	(void)state;
	base_cfg(&cfg);
	cfg.max_session_computers = 16;
	cfg.max_session_commands = 16;
	cfg.max_pending_calls = 4096;
	assert_int_equal(msc_driver_start(URL_DRIVER, &describing_ops, &be, 2,
	    &drv), 0);
	assert_int_equal(msc_fleet_open(&cfg, URL_DRIVER, &fleet), 0);
	assert_int_equal(sess_start(&cfg, URL_SESSION, URL_INVENTORY, fleet,
	    &sess), 0);
	assert_int_equal(msc_client_open(URL_SESSION, NULL, &cli), 0);
	assert_int_equal(msc_client_call_sync(cli,
	    &msc__v1__session__descriptor, "Describe", &e.base, 5000, &resp,
	    msg, sizeof(msg)), MSC__V1__CODE__OK);
	has(strdup(((Msc__V1__ToolDescription *)resp)->text), "Debian",
	    "run in sh.");
	protobuf_c_message_free_unpacked(resp, NULL);
	msc_client_close(cli);
	sess_stop(sess);
	msc_fleet_close(fleet);
	assert_true(msc_driver_stop(drv));
}

/*
 * The edge's description: the override at once, without asking; else the
 * driver's, fetched in the background once the services come up (the
 * edge starts and answers before them).
 */
static void
edge_fetches_late(void **state)
{
	struct msc_cfg cfg;
	struct fake_driver be = { &cfg };
	struct msc_driver *drv;
	struct msc_fleet *fleet;
	struct sess_service *sess;
	struct msc_client *cli;
	struct edge_desc *desc;
	const char *d;

	(void)state;
	base_cfg(&cfg);
	cfg.max_session_computers = 16;
	cfg.max_session_commands = 16;
	cfg.max_pending_calls = 4096;
	cfg.tool_instruction_override = "O";
	assert_int_equal(msc_client_open(URL_SESSION, NULL, &cli), 0);
	assert_int_equal(edge_desc_start(&cfg, cli, &desc), 0);
	assert_string_equal(edge_desc_get(desc, 0), "O");
	edge_desc_stop(desc);

	cfg.tool_instruction_override = NULL;
	cfg.extended_tool_instruction = "E";
	assert_int_equal(edge_desc_start(&cfg, cli, &desc), 0);
	assert_null(edge_desc_get(desc, 300));    /* nobody serves yet */
	assert_int_equal(msc_driver_start(URL_DRIVER, &describing_ops, &be, 2,
	    &drv), 0);
	assert_int_equal(msc_fleet_open(&cfg, URL_DRIVER, &fleet), 0);
	assert_int_equal(sess_start(&cfg, URL_SESSION, URL_INVENTORY, fleet,
	    &sess), 0);
	d = edge_desc_get(desc, 10000);
	assert_non_null(d);
	assert_non_null(strstr(d, "Debian Linux sandbox"));
	assert_int_equal(strcmp(d + strlen(d) - 3, "\n\nE"), 0);
	edge_desc_stop(desc);
	msc_client_close(cli);
	sess_stop(sess);
	msc_fleet_close(fleet);
	assert_true(msc_driver_stop(drv));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(backend_texts),
		cmocka_unit_test(driver_describe),
		cmocka_unit_test(session_describe),
		cmocka_unit_test(edge_fetches_late),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
