/*
 * handles_mem.c - the session service's memory with idle handles: the
 * real session and inventory services over inproc:// with the unit
 * tests' fake driver (computers in memory), N sandbox handles (MCP
 * 2026-07-28) opened and left idle, against N 2025-era sessions in the
 * same run (the baseline); then 200 handles each given a computer by one
 * terminal_execute (the fake driver holds 256 at most). Prints VmRSS
 * growth per handle. Exits 1 when a call fails.
 *
 *   build/bench/handles_mem [N]     (default 10000; the same program as
 *   build/tests/unit/bench-handles-mem)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sess_harness.h"

static long
rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return kb;
}

/*
 * Opens n sessions (sandbox handles when `sandbox`), with one command
 * each when `run` (then each holds a computer).
 */
static long
grow(int n, bool sandbox, bool run)
{
	Msc__V1__OpenRequest o = MSC__V1__OPEN_REQUEST__INIT;
	long before = rss_kb();

	o.client_name = "bench";
	o.sandbox = sandbox;
	for (int i = 0; i < n; i++) {
		ProtobufCMessage *resp = NULL;
		char sid[SH_ID_SIZE];

		if (sh_call("Open", &o.base, &resp) != MSC__V1__CODE__OK) {
			fprintf(stderr, "Open %d failed\n", i);
			exit(1);
		}
		snprintf(sid, sizeof(sid), "%s",
		    ((Msc__V1__SessionRef *)resp)->session_id);
		protobuf_c_message_free_unpacked(resp, NULL);
		if (run && sh_exec(sid, NULL, -1, NULL) != MSC__V1__CODE__OK) {
			fprintf(stderr, "exec %d failed\n", i);
			exit(1);
		}
	}
	return rss_kb() - before;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000;
	char max[32];
	const char *flags[] = { "--max-sandboxes", max, NULL };
	long legacy, handles, used;

	snprintf(max, sizeof(max), "%d", n + 300);
	if (n < 1 || sh_start(1, flags) != 0) {
		fprintf(stderr, "bench-handles-mem: cannot start\n");
		return 1;
	}
	(void)grow(20, true, true);     /* warm the allocator and the maps */
	legacy = grow(n, false, false);
	handles = grow(n, true, false);
	used = grow(200, true, true);
	printf("| idle state | count | RSS growth | per item |\n|---|---|---|---|\n");
	printf("| 2025 sessions, idle (baseline) | %d | %.1f MB | %.0f B |\n",
	    n, legacy / 1024.0, legacy * 1024.0 / n);
	printf("| sandbox handles, idle | %d | %.1f MB | %.0f B (%.2fx) |\n",
	    n, handles / 1024.0, handles * 1024.0 / n,
	    legacy > 0 ? (double)handles / (double)legacy : 0.0);
	printf("| sandbox handles after one command each (computer in the fake driver and the inventory too) | 200 | %.2f MB | %.0f B |\n",
	    used / 1024.0, used * 1024.0 / 200);
	/* Everything freed: under ASan a leak fails the CI run (tests/bench). */
	sh_stop(NULL);
	return 0;
}
