/*
 * core_util.h - helpers for the tests of the session and inventory
 * services over the wire: a collector of asynchronous answers that the
 * test waits on (no sleeps), and a configuration from a few flags.
 */
#ifndef CORE_UTIL_H
#define CORE_UTIL_H

#include <pthread.h>
#include <stdbool.h>

#include "msc_cfg.h"
#include "msc_rpc.h"

#define CU_MAX_ANSWERS 256
#define CU_WAIT_MS 10000

/*
 * Answers of asynchronous calls, in arrival order. Tests keep theirs in
 * static storage: after a failed assertion the teardown still ends the
 * calls in flight, whose callbacks must not write to a frame that is gone.
 */
struct cu_answers {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n;
	Msc__V1__Code codes[CU_MAX_ANSWERS];
	ProtobufCMessage *resps[CU_MAX_ANSWERS];  /* owned; NULL unless OK */
};

void cu_answers_init(struct cu_answers *a);
/* Frees the responses kept. */
void cu_answers_fini(struct cu_answers *a);
/* An msc_reply_fn for msc_client_call(..., cu_answered, answers). */
void cu_answered(void *arg, const struct msc_status *st,
    ProtobufCMessage *resp);
/* Waits until n answers arrived; false after CU_WAIT_MS. */
bool cu_wait_answers(struct cu_answers *a, int n);
/* How many answers had code c. */
int cu_count_code(struct cu_answers *a, Msc__V1__Code c);

/* Parses argv (NULL-terminated, without the program name) into cfg. */
int cu_cfg(struct msc_cfg *cfg, const char *const *argv);

#endif /* CORE_UTIL_H */
