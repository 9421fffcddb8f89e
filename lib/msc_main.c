#include "msc_main.h"

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

int
msc_main_config(struct msc_cfg *cfg, unsigned prog, int argc, char **argv)
{
	int rv = msc_cfg_parse(cfg, prog, argc, argv);

	if (rv == MSC_CFG_EXIT_HELP)
		return 0;
	if (rv != 0)
		return 2;
	if (msc_cfg_validate(cfg) != 0 || msc_main_check_transport(cfg) != 0)
		return 1;
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
