/* core_util.c - see core_util.h. */
#include "core_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every role of lib, no backend: the services these tests run. */
static const struct msc_program core_services = { "mcp-sandbox-computer",
	NULL, MSC_PROG_ALL, NULL, 0 };

void
cu_answers_init(struct cu_answers *a)
{
	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
}

void
cu_answers_fini(struct cu_answers *a)
{
	for (int i = 0; i < a->n; i++)
		if (a->resps[i] != NULL)
			protobuf_c_message_free_unpacked(a->resps[i], NULL);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
}

void
cu_answered(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct cu_answers *a = arg;

	pthread_mutex_lock(&a->mu);
	if (a->n < CU_MAX_ANSWERS) {
		a->codes[a->n] = st->code;
		a->resps[a->n] = resp;
		resp = NULL;
	}
	a->n++;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
}

bool
cu_wait_answers(struct cu_answers *a, int n)
{
	struct timespec until;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CU_WAIT_MS / 1000;
	pthread_mutex_lock(&a->mu);
	while (a->n < n)
		if (pthread_cond_timedwait(&a->cv, &a->mu, &until) != 0) {
			ok = a->n >= n;
			break;
		}
	pthread_mutex_unlock(&a->mu);
	return ok;
}

int
cu_count_code(struct cu_answers *a, Msc__V1__Code c)
{
	int k = 0;

	pthread_mutex_lock(&a->mu);
	for (int i = 0; i < a->n && i < CU_MAX_ANSWERS; i++)
		if (a->codes[i] == c)
			k++;
	pthread_mutex_unlock(&a->mu);
	return k;
}

int
cu_cfg(struct msc_cfg *cfg, const char *const *argv)
{
	char *args[32];
	int n = 0;

	args[n++] = "test";
	while (argv != NULL && argv[n - 1] != NULL && n < 31) {
		args[n] = (char *)argv[n - 1];
		n++;
	}
	args[n] = NULL;
	return msc_cfg_parse(cfg, &core_services, n, args);
}
