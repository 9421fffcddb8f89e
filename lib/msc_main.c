#include "msc_main.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "msc_tls.h"

int
msc_main_check_transport(const struct msc_cfg *cfg)
{
	const char *urls[] = { cfg->session_url, cfg->inventory_url,
		cfg->listen };
	char err[512];

	if ((cfg->tls_ca != NULL || cfg->tls_cert != NULL) &&
	    msc_tls_setup(cfg->tls_ca, cfg->tls_cert, err, sizeof(err)) != 0)
		goto fail;
	for (size_t i = 0; i < sizeof(urls) / sizeof(*urls); i++)
		if (urls[i] != NULL &&
		    msc_tls_check_url(urls[i], cfg->allow_plain_tcp, err,
			sizeof(err)) != 0)
			goto fail;
	for (size_t i = 0; i < cfg->n_driver_urls; i++) {
		char id[64];
		const char *url;

		(void)msc_cfg_driver(cfg, i, id, sizeof(id), &url);
		if (msc_tls_check_url(url, cfg->allow_plain_tcp, err,
			sizeof(err)) != 0)
			goto fail;
	}
	return 0;
fail:
	msc_cfg_error("%s", err);
	return -1;
}

/*
 * Memory after a burst (issue 27): glibc keeps what large calls freed (a
 * request's stdin, a command's output, the messages that carry them) in
 * its arenas for the next ones, so 208 calls with 2 MB of stdin left a
 * server at 1.4 GiB resident. Once a second, when the arenas hold more
 * free memory than MAIN_TRIM_FREE, it goes back to the system. (Mapping large buffers on their own
 * instead, M_MMAP_THRESHOLD, made such a burst three times slower.)
 */
#define MAIN_TRIM_FREE ((size_t)16 << 20)

#define MAIN_TRIM_MOVED ((size_t)4 << 20)

static size_t
moved(size_t a, size_t b)
{
	return a > b ? a - b : b - a;
}

static void *
heap_trimmer(void *arg)
{
	struct mallinfo2 mi, last = { 0 };

	(void)arg;
	for (;;) {
		sleep(1);
		mi = mallinfo2();
		/* Trimmed pages stay counted free: trim again only once the
		 * heap moved since. */
		if (mi.fordblks > MAIN_TRIM_FREE && moved(mi.uordblks, last.uordblks) +
		    moved(mi.fordblks, last.fordblks) > MAIN_TRIM_MOVED) {
			(void)malloc_trim(0);
			last = mi;
		}
	}
	return NULL;
}

/* One thread for the process, which takes no signal (main waits for
 * them). Without it memory is only kept longer: no error. */
static void
heap_trimmer_spawn(void)
{
	sigset_t all, old;
	pthread_t t;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, heap_trimmer, NULL) == 0)
		pthread_detach(t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void
heap_trimmer_start(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void)pthread_once(&once, heap_trimmer_spawn);
}

int
msc_main_config(struct msc_cfg *cfg, const struct msc_program *prog,
    int argc, char **argv)
{
	int rv = msc_cfg_parse(cfg, prog, argc, argv);

	if (rv == MSC_CFG_EXIT_HELP)
		return 0;
	if (rv != 0)
		return 2;
	if (msc_cfg_validate(cfg) != 0 || msc_main_check_transport(cfg) != 0)
		return 1;
	heap_trimmer_start();
	return -1;
}

static void
signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
}

void
msc_main_block_signals(void)
{
	sigset_t set;

	signal_set(&set);
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGHUP);        /* the HTTP edge's; else ignored */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int
msc_main_wait_signal(void)
{
	sigset_t set;
	int sig = 0;

	signal_set(&set);
	while (sigwait(&set, &sig) != 0)
		;
	return sig;
}

int
msc_main_wait_signal_or_hup(void)
{
	sigset_t set;
	int sig = 0;

	signal_set(&set);
	sigaddset(&set, SIGHUP);
	while (sigwait(&set, &sig) != 0)
		;
	return sig;
}

const char *
msc_main_find_file(const char *env, int mode, const char *const cands[])
{
	const char *v = getenv(env);

	if (v != NULL && *v != '\0')
		return access(v, mode) == 0 ? v : NULL;
	for (int i = 0; cands[i] != NULL; i++)
		if (access(cands[i], mode) == 0)
			return cands[i];
	return NULL;
}
