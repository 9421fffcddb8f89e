/*
 * modal_conf.h - where the Modal backend's credentials and endpoint come
 * from: --modal-token-id/--modal-token-secret, then MODAL_TOKEN_ID and
 * MODAL_TOKEN_SECRET, then a profile of the Modal config file
 * (MODAL_CONFIG_PATH, else ~/.modal.toml: the profile MODAL_PROFILE names,
 * else the one with active = true, else the first). The server URL is
 * MODAL_SERVER_URL, else the profile's server_url, else Modal's public
 * API; the environment MODAL_ENVIRONMENT or the profile's environment.
 *
 * The file reader understands the TOML that Modal writes: [tables],
 * key = "basic" or 'literal' strings, booleans, numbers, comments.
 * Unit-tested in tests/unit/test_modal_conf.c.
 */
#ifndef MODAL_CONF_H
#define MODAL_CONF_H

#include <stdbool.h>
#include <stddef.h>

#define MODAL_DEFAULT_SERVER_URL "https://api.modal.com:443"
#define MODAL_CONF_MAX (1u << 20)       /* a larger config file is refused */

struct modal_profile {
	char name[128];
	char token_id[256];
	char token_secret[256];
	char server_url[512];
	char environment[128];
	char image_builder_version[64];
	bool active;
};

/*
 * Reads TOML text and picks a profile: `want` when not NULL or "", else
 * the active one, else the first. Returns 0, -ENOENT (no such profile,
 * or none: p is then zeroed) or -EINVAL with the line in err.
 */
int modal_conf_parse(const char *text, const char *want,
    struct modal_profile *p, char *err, size_t errlen);

struct modal_creds {
	char token_id[256];
	char token_secret[256];
	char server_url[512];
	char environment[128];
	char image_builder_version[64];
	char config_path[512];  /* the file read, "" when none */
};

/*
 * Resolves everything as above (flags may be NULL). A missing file is
 * fine; an unreadable or malformed one is -EINVAL with err.
 */
int modal_conf_resolve(const char *flag_id, const char *flag_secret,
    struct modal_creds *c, char *err, size_t errlen);

/* Wipes the secrets. */
void modal_creds_clear(struct modal_creds *c);

#endif /* MODAL_CONF_H */
