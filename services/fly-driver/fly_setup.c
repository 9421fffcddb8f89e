/*
 * fly_setup.c - credentials and the app, resolved once on first use:
 * --fly-token / FLY_API_TOKEN / FLY_TOKEN, else the cached `fly auth
 * login` session; --fly-app / FLY_APP_NAME, else the app remembered in
 * the state file, else a new app with a generated name in FLY_ORG (default
 * the personal organization), remembered for next time.
 */
#include "fly_driver_int.h"
#include "fly_cfg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_random.h"

#define T_APP 30000
#define STATE_DIR ".mcp-sandbox-computer-vm-for-ai"

/* Reads a small file into a malloc'd string; NULL when unreadable. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (f == NULL)
		return NULL;
	if ((buf = malloc(65537)) == NULL) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, 65536, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Where the token came from, for messages (never the token itself). */
static const char *
token_source(const struct msc_cfg *cfg)
{
	const char *token = fly_cfg(cfg)->fly_token;

	if (token == getenv("FLY_API_TOKEN"))
		return "FLY_API_TOKEN";
	if (token == getenv("FLY_TOKEN"))
		return "FLY_TOKEN";
	return "--fly-token or --fly-token-file";
}

static int
load_token(struct fly_driver *d, char *tok, size_t len, const char **srcp,
    char *err, size_t errlen)
{
	const char *home = getenv("HOME");
	const char *token = fly_cfg(d->cfg)->fly_token;
	char path[4096];
	char *text;
	int rv = -ENOENT;

	if (token != NULL && *token != '\0') {
		*srcp = token_source(d->cfg);
		if (snprintf(tok, len, "%s", token) >= (int)len)
			rv = -ENOSPC;
		else
			return 0;
	} else if (home != NULL) {
		snprintf(path, sizeof(path), "%s/.fly/config.yml", home);
		if ((text = slurp(path)) != NULL) {
			rv = fly_conv_yaml_token(text, tok, len);
			explicit_bzero(text, strlen(text));
			free(text);
		}
		*srcp = "the cached `fly auth login` session "
			"(~/.fly/config.yml)";
		if (rv == 0)
			return 0;
	}
	snprintf(err, errlen, "Fly backend requires credentials: pass "
			      "--fly-token, set FLY_API_TOKEN or FLY_TOKEN, or "
			      "run `fly auth login`. Use an app-scoped deploy "
			      "token where possible.");
	return -EACCES;
}

static void
state_path(char *buf, size_t len)
{
	const char *env = getenv("KILNTAINERS_FLY_STATE_FILE");
	const char *home = getenv("HOME");

	if (env != NULL && *env != '\0')
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "%s/" STATE_DIR "/fly.json",
		    home != NULL ? home : ".");
}

/* Writes the state file atomically (mode 0600, directory 0700). */
static void
state_save(const char *path, const char *app, const char *org)
{
	char tmp[4200], dir[4096], *slash;
	json_t *j = json_pack("{s:s, s:s}", "app_name", app, "org_slug", org);
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		(void)mkdir(dir, 0700);
	}
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (j == NULL || fd < 0 ||
	    json_dumpfd(j, fd, JSON_INDENT(2)) != 0 || write(fd, "\n", 1) != 1 ||
	    close(fd) != 0 || rename(tmp, path) != 0) {
		msc_log_warn("fly: cannot write the state file %s: %s", path,
		    strerror(errno));
		if (fd >= 0)
			(void)unlink(tmp);
	} else
		msc_log_info("fly: remembered app %s in %s", app, path);
	json_decref(j);
}

static int
app_exists(struct fly_driver *d, struct fly_api *api, const char *app,
    char *err, size_t errlen)
{
	char path[256];
	struct fly_req r = { .method = "GET", .path = path,
		.timeout_ms = T_APP, .retry_5xx = true };

	snprintf(path, sizeof(path), "/v1/apps/%s", app);
	(void)d;
	return fly_api_call(api, &r, NULL, NULL, err, errlen);
}

static int
app_create(struct fly_driver *d, struct fly_api *api, const char *org,
    char *app, size_t applen, char *err, size_t errlen)
{
	struct fly_req r = { .method = "POST", .path = "/v1/apps",
		.timeout_ms = T_APP, .retry_5xx = true };
	int rv = -EEXIST;

	(void)d;
	for (int i = 0; i < 4 && rv == -EEXIST; i++) {
		char rnd[11];

		msc_random_hex(rnd, 5);
		snprintf(app, applen, "kilntainers-%s", rnd);
		r.body = json_pack("{s:s, s:s}", "app_name", app, "org_slug",
		    org);
		if (r.body == NULL)
			return -ENOMEM;
		rv = fly_api_call(api, &r, NULL, NULL, err, errlen);
		json_decref(r.body);
	}
	if (rv == -ENOENT || rv == -EINVAL) {
		char detail[FLY_ERRLEN];

		snprintf(detail, sizeof(detail), "%s", err);
		snprintf(err, errlen, "Cannot create a Fly app in organization "
				      "'%s' (%s). Set FLY_ORG to one of your "
				      "organizations (`fly orgs list`), or set "
				      "FLY_APP_NAME/--fly-app to an existing app.",
		    org, detail);
	}
	return rv;
}

static void
explain_auth(int rv, const char *src, char *err, size_t errlen)
{
	char detail[FLY_ERRLEN];

	if (rv != -EACCES)
		return;
	snprintf(detail, sizeof(detail), "%s", err);
	snprintf(err, errlen, "Fly rejected the credentials from %s (%s). "
			      "Check the token, or run `fly auth login`.",
	    src, detail);
}

static int
resolve_app(struct fly_driver *d, struct fly_api *api, const char *src,
    char *err, size_t errlen)
{
	const struct fly_cfg *fc = fly_cfg(d->cfg);
	const char *org = getenv("FLY_ORG");
	char path[4096], app[FLY_APPLEN] = "";
	char *text;
	int rv;

	if (fc->fly_org != NULL && *fc->fly_org != '\0')
		org = fc->fly_org;
	if (org == NULL || *org == '\0')
		org = "personal";
	if (fc->fly_app != NULL && *fc->fly_app != '\0') {
		rv = app_exists(d, api, fc->fly_app, err, errlen);
		if (rv == -ENOENT)
			snprintf(err, errlen, "Fly app '%s' (--fly-app or "
					      "FLY_APP_NAME) was not found. "
					      "Create it with `fly apps create "
					      "%s`, or leave both unset to let "
					      "the server create an app.",
			    fc->fly_app, fc->fly_app);
		explain_auth(rv, src, err, errlen);
		if (rv == 0)
			snprintf(d->app, sizeof(d->app), "%s", fc->fly_app);
		return rv;
	}
	state_path(path, sizeof(path));
	if ((text = slurp(path)) != NULL) {
		rv = fly_conv_state_app(text, app, sizeof(app));
		free(text);
		if (rv == 0) {
			rv = app_exists(d, api, app, err, errlen);
			if (rv == 0) {
				snprintf(d->app, sizeof(d->app), "%s", app);
				return 0;
			}
			if (rv != -ENOENT) {
				explain_auth(rv, src, err, errlen);
				return rv;
			}
			msc_log_warn("fly: app %s from %s is gone; creating "
				     "another", app, path);
		}
	}
	if ((rv = app_create(d, api, org, app, sizeof(app), err,
		 errlen)) != 0) {
		explain_auth(rv, src, err, errlen);
		return rv;
	}
	msc_log_info("fly: created app %s in organization %s", app, org);
	state_save(path, app, org);
	snprintf(d->app, sizeof(d->app), "%s", app);
	return 0;
}

int
fly_setup(struct fly_driver *d, char *err, size_t errlen)
{
	struct fly_api *api = NULL;
	const char *src = "";
	char tok[8192];
	int rv;

	pthread_mutex_lock(&d->setup_mu);
	if (d->api != NULL) {
		pthread_mutex_unlock(&d->setup_mu);
		return 0;
	}
	if ((rv = load_token(d, tok, sizeof(tok), &src, err, errlen)) != 0)
		goto out;
	rv = fly_api_new(d->base_url, tok, &api);
	explicit_bzero(tok, sizeof(tok));
	if (rv != 0) {
		snprintf(err, errlen, "Fly backend: the token from %s is empty "
				      "or too long.", src);
		goto out;
	}
	if ((rv = resolve_app(d, api, src, err, errlen)) != 0) {
		fly_api_free(api);
		goto out;
	}
	msc_log_info("fly: using app %s at %s", d->app, d->base_url);
	__atomic_store_n(&d->api, api, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&d->setup_mu);
	return rv;
}
