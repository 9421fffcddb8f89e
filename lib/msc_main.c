#include "msc_main.h"

#include <signal.h>
#include <stddef.h>

int
msc_main_config(struct msc_cfg *cfg, int argc, char **argv)
{
	int rv = msc_cfg_parse(cfg, argc, argv);

	if (rv == MSC_CFG_EXIT_HELP)
		return 0;
	if (rv != 0)
		return 2;
	if (msc_cfg_validate(cfg) != 0)
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
