/*
 * cloud_cfg.c - what the cloud backends share on the command line (the
 * rows, msc-cloud-driver's among them: cloud_backend.c).
 */
#include "cloud_cfg.h"

#include "msc_backend.h"

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

