/*
 * cloud_cfg.c - what the cloud backends share on the command line, and
 * msc-cloud-driver, which serves either (--backend e2b or modal).
 */
#include "cloud_cfg.h"

#include "e2b_cfg.h"
#include "modal_cfg.h"

int
cloud_cfg_validate(const struct msc_cfg *cfg)
{
	/* A resolver alone is no policy; with an allowlist, a proxy's. */
	const char *const proxy[] = { "proxy-credential",
		"proxy-credential-file",
		cfg->n_net_allow > 0 ? "proxy-dns-server" : NULL, NULL };

	return msc_backend_net_refuse(cfg, true, proxy, "on E2B and Modal only "
	    "--network-allow maps onto the provider's egress rules: deny "
	    "entries cannot narrow it there, and there is no proxy to add "
	    "credentials or resolve names");
}

static const struct msc_backend *const backends[] = { &e2b_backend,
	&modal_backend };

const struct msc_program cloud_program = { "msc-cloud-driver", "The driver "
	"of E2B or Modal sandboxes (--backend e2b or modal).", MSC_PROG_DRIVER,
	backends, 2 };
