/*
 * fuzz_jsonrpc.c - feeds arbitrary bytes to the edge's JSON-RPC reader
 * (mcp_conn_handle) and the terminal_execute argument rules. Built as a
 * libFuzzer target with -Dfuzz=true (clang), else as a replay program that
 * runs the files given on its command line (the corpus, in the tests).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "mcp_era.h"
#include "msc_cfg.h"

static void
drop(void *ctx, json_t *msg)
{
	/* Every reply must be encodable: that is what stdout would get. */
	char *text = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);

	(void)ctx;
	if (text == NULL)
		abort();
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct msc_cfg cfg;
	static int ready;
	struct mcp_conn conn;

	if (!ready) {
		char *argv[] = { "fuzz", NULL };

		msc_cfg_parse(&cfg, &msc_prog_edge, 1, argv);
		ready = 1;
	}
	mcp_conn_init(&conn, &cfg, NULL, "description", drop, NULL);
	mcp_conn_handle(&conn, (const char *)data, size);
	mcp_conn_fini(&conn, 0);
	/* The same bytes as an Mcp-Name header value (base64 sentinel). */
	char *text = strndup((const char *)data, size);

	if (text != NULL)
		free(mcp_era_header_value(text));
	free(text);
	return 0;
}
