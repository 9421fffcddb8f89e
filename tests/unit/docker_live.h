/*
 * docker_live.h - the harness of the live-engine tests: one engine handle,
 * a main container (label kilntainers.test=1, all removed in teardown),
 * and helpers to run commands and look at containers. Every test skips
 * when no engine answers.
 */
#ifndef TEST_DOCKER_LIVE_H
#define TEST_DOCKER_LIVE_H

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "docker_api.h"

#define IMAGE		"debian:bookworm-slim"
#define TMO		30000
#define MAX_MADE	16

struct live {
	struct dock_engine	*e;
	bool			 up;
	char			 main_id[65];
	char			 made[MAX_MADE][65];
	int			 nmade;
};

#define NEED_ENGINE(l) do {			\
	if (!(l)->up)				\
		skip();				\
} while (0)

int64_t now_ms(void);
int make_container(struct live *l, const char *tag, char id[65]);
int group_setup(void **state);
int group_teardown(void **state);
int run(struct live *l, const char *id, const char *const *argv,
    const char *workdir, const void *in, size_t inlen, bool has_stdin,
    int timeout_ms, size_t limit, struct dock_exec_res *res);
int sh(struct live *l, const char *script, struct dock_exec_res *res);
int count_procs(struct live *l, const char *id, const char *needle);
char * started_at(struct live *l, const char *id);
bool is_running(struct live *l, const char *id);

#endif /* TEST_DOCKER_LIVE_H */
