/*
 * fuzz_netpolicy.c - network policy names (lib/msc_netpolicy) with
 * hostile bytes: the first line holds entries (a leading '-' makes a deny
 * entry), the rest is the host a computer asks for. Checks that a host
 * is allowed only when valid and covered by a checked allow entry and by
 * no deny entry. Its replay build (fuzz_replay.c) runs the files named on
 * the command line.
 */
/* the checks are the fuzzer's oracle: kept in a release build too */
#undef NDEBUG
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_netpolicy.h"

#define ENTRIES_MAX 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *nl, *save = NULL, *tok, err[512];
	const char *allow[ENTRIES_MAX], *deny[ENTRIES_MAX], *which;
	size_t na = 0, nd = 0;
	enum msc_net_verdict v;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if ((nl = strchr(buf, '\n')) == NULL) {
		(void)msc_net_host_valid(buf);
		free(buf);
		return 0;
	}
	*nl = '\0';
	for (tok = strtok_r(buf, " ", &save); tok != NULL;
	    tok = strtok_r(NULL, " ", &save)) {
		bool d = *tok == '-';

		if (msc_net_entry_check(tok + d, err, sizeof(err)) != 0)
			continue;
		if (d && nd < ENTRIES_MAX)
			deny[nd++] = tok + 1;
		else if (!d && na < ENTRIES_MAX)
			allow[na++] = tok;
	}
	v = msc_net_decide(allow, na, deny, nd, nl + 1, &which);
	if (v == MSC_NET_ALLOWED) {
		assert(msc_net_host_valid(nl + 1));
		assert(which != NULL && msc_net_entry_match(which, nl + 1));
		for (size_t i = 0; i < nd; i++)
			assert(!msc_net_entry_match(deny[i], nl + 1));
	}
	if (!msc_net_host_valid(nl + 1))
		assert(v == MSC_NET_BAD_NAME);
	free(buf);
	return 0;
}
