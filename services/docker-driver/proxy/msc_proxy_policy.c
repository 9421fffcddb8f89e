/*
 * msc-proxy-policy - the allowlist proxy's policy check: a squid external
 * ACL helper (docker_proxy.c configures squid to run it, ttl=0, so each
 * request is checked against the policy as it is now).
 *
 * squid writes one line per request, "SRC DST ...": the computer's
 * address and the name it asked for. The driver keeps one file per
 * computer in allowlist mode, DIR/<SRC> (docker_policy.c):
 *
 *     id <computer-id>
 *     allow <entry>       (any number, msc_netpolicy.h)
 *     deny <entry>
 *
 * The answer is "OK log=..." when an allow entry covers DST and no deny
 * entry does, else "ERR message=\"...\" log=...": squid puts the message
 * on the refusal page and the log word in the decision log. A source
 * with no file, a file that cannot be read, a DST that is not a host
 * name (an IP literal, a trailing dot, an IDN) are refused.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_netpolicy.h"

#define LINE_MAX_LEN 1024
#define ENTRIES_MAX 512

struct policy {
	char id[80];
	char *allow[ENTRIES_MAX], *deny[ENTRIES_MAX];
	size_t nallow, ndeny;
};

static void
policy_free(struct policy *p)
{
	for (size_t i = 0; i < p->nallow; i++)
		free(p->allow[i]);
	for (size_t i = 0; i < p->ndeny; i++)
		free(p->deny[i]);
	p->nallow = p->ndeny = 0;
}

/* 0 with the policy of computer address `src`, or -1 when there is none. */
static int
policy_load(const char *dir, const char *src, struct policy *p)
{
	char path[4096], line[LINE_MAX_LEN], word[16], val[LINE_MAX_LEN];
	FILE *f;

	memset(p, 0, sizeof(*p));
	snprintf(path, sizeof(path), "%s/%s", dir, src);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		char **slot = NULL;

		if (sscanf(line, "%15s %1023s", word, val) != 2)
			continue;
		if (strcmp(word, "id") == 0)
			snprintf(p->id, sizeof(p->id), "%.79s", val);
		else if (strcmp(word, "allow") == 0 && p->nallow < ENTRIES_MAX)
			slot = &p->allow[p->nallow++];
		else if (strcmp(word, "deny") == 0 && p->ndeny < ENTRIES_MAX)
			slot = &p->deny[p->ndeny++];
		if (slot != NULL && (*slot = strdup(val)) == NULL) {
			fclose(f);
			policy_free(p);
			return -1;
		}
	}
	fclose(f);
	return p->id[0] != '\0' ? 0 : (policy_free(p), -1);
}

/*
 * A DST for the message and the log: host-name bytes (and those of an
 * address: ':', '[', ']') only, others as '?', at most 100. The refusal
 * page shows the message as it is (docker_proxy.c), so nothing in it may
 * read as markup or end the quoted value.
 */
static void
log_safe(const char *s, char *out, size_t len)
{
	size_t j = 0;

	for (; *s != '\0' && j + 1 < len && j < 100; s++)
		out[j++] = (isalnum((unsigned char)*s) || strchr(".-_*:[]",
		    *s) != NULL) ? *s : '?';
	out[j] = '\0';
}

static void
answer(const char *dir, const char *src, const char *dst)
{
	unsigned char a[16];
	struct policy p;
	const char *which = NULL;
	char host[128];

	log_safe(dst, host, sizeof(host));
	if (inet_pton(AF_INET, src, a) != 1 || policy_load(dir, src, &p) != 0) {
		printf("ERR message=\"this address has no network policy "
		    "(allowlist mode only)\" log=-:refused:no-policy\n");
		return;
	}
	switch (msc_net_decide((const char *const *)p.allow, p.nallow,
	    (const char *const *)p.deny, p.ndeny, dst, &which)) {
	case MSC_NET_ALLOWED:
		printf("OK log=%s:allowed:%s\n", p.id, which);
		break;
	case MSC_NET_DENIED:
		printf("ERR message=\"%s is on computer %s's network policy "
		    "deny list (%s)\" log=%s:refused:deny:%s\n", host, p.id,
		    which, p.id, which);
		break;
	case MSC_NET_UNLISTED:
		printf("ERR message=\"%s is not on computer %s's network "
		    "policy allowlist\" log=%s:refused:not-allowed\n", host,
		    p.id, p.id);
		break;
	default:
		printf("ERR message=\"%s is not a domain name: the network "
		    "policy of computer %s allows names only (no IP "
		    "addresses)\" log=%s:refused:not-a-name\n", host, p.id,
		    p.id);
		break;
	}
	policy_free(&p);
}

int
main(int argc, char **argv)
{
	char line[LINE_MAX_LEN + 2], src[64], dst[LINE_MAX_LEN];

	if (argc != 2) {
		fprintf(stderr, "usage: msc-proxy-policy DIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strchr(line, '\n') == NULL) {
			int c;

			while ((c = getchar()) != EOF && c != '\n')
				;
			printf("ERR message=\"request too long\" "
			    "log=-:refused:too-long\n");
			continue;
		}
		if (sscanf(line, "%63s %1023s", src, dst) != 2) {
			printf("ERR log=-:refused:bad-request\n");
			continue;
		}
		answer(argv[1], src, dst);
	}
	return 0;
}
