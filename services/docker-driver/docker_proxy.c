/*
 * docker_proxy.c - the allowlist proxy: Debian's squid, run and
 * configured by the driver, outside every container, listening on the
 * sandbox bridge's address (docker_policy.h).
 *
 * Why squid and not a proxy of our own: it is well kept, parses HTTP
 * strictly (each request of a kept-alive connection is checked on its
 * own, conflicting lengths refused), resolves names itself (its own DNS
 * client, --proxy-dns-server or the host's resolvers) and checks the
 * addresses it resolved (acl dst: a name that resolves to a private,
 * loopback, link-local or metadata address is refused), and it marks its
 * connections out (tcp_outgoing_mark), so that the policy table rejects
 * any of them whose address, the one it really connects to, is blocked:
 * DNS rebinding between the check and the connect gains nothing. What it
 * cannot do alone, the per-computer allowlist read anew for each request,
 * is our external ACL helper (proxy/msc_proxy_policy.c, ttl=0).
 *
 * The rules in order: the policy helper (the computer's allow and deny
 * lists; an IP literal or other non-name is refused), CONNECT only to
 * port 443, plain HTTP only to port 80, no other scheme, no blocked
 * address. Each refusal names the policy; each decision is a line of the
 * decision log, DIR/decisions.log (time, computer address, helper verdict
 * "computer:allowed|refused:why", method, URL, status, squid's code).
 * squid dies with the driver's thread that started it (PDEATHSIG); a
 * proxy that died is started again on the next create or policy change,
 * and meanwhile its computers reach nothing.
 */
#include "docker_driver_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_main.h"

#define T_PROXY_START_MS 20000
#define SQUID_USER "proxy"              /* Debian's squid user */
#define SQUID_TEMPLATES "/usr/share/squid/errors/templates"

static const char *
squid_path(void)
{
	const char *s = getenv("MSC_SQUID");

	return s != NULL && *s != '\0' ? s : "/usr/sbin/squid";
}

static const char *
helper_path(void)
{
	static const char *const cands[] = {
#ifdef MSC_PROXY_POLICY_BUILD
		MSC_PROXY_POLICY_BUILD,
#endif
#ifdef MSC_PROXY_POLICY_INSTALLED
		MSC_PROXY_POLICY_INSTALLED,
#endif
		NULL };

	return msc_main_find_file("MSC_PROXY_POLICY", X_OK, cands);
}

/* Whether something accepts TCP at gw:port (connect, then close). */
static bool
port_answers(const char *gw, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	inet_pton(AF_INET, gw, &sa.sin_addr);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* Whether gw:port can be bound now. */
static bool
port_free(const char *gw, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	bool ok;

	if (fd < 0)
		return false;
	inet_pton(AF_INET, gw, &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* The port: the same one for the same driver id when free. */
static int
pick_port(const char *gw, const char *driver_id)
{
	unsigned h = 5381;

	for (const char *s = driver_id != NULL ? driver_id : ""; *s; s++)
		h = h * 33 + (unsigned char)*s;
	for (int i = 0; i < DOCK_PROXY_PORT_SPAN; i++) {
		int port = DOCK_PROXY_PORT_MIN +
		    (int)((h + (unsigned)i) % DOCK_PROXY_PORT_SPAN);

		if (port_free(gw, port))
			return port;
	}
	return -EADDRINUSE;
}

static int
mkdir_p(const char *path, mode_t mode)
{
	char tmp[1024];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Creates `path` empty, owned by the squid user when we are root. */
static int
squid_file(const char *path, const struct passwd *pw)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);

	if (fd < 0)
		return -errno;
	if (pw != NULL && fchown(fd, pw->pw_uid, pw->pw_gid) != 0) {
		int rv = -errno;

		close(fd);
		return rv;
	}
	close(fd);
	return 0;
}

static int
write_text(const char *path, mode_t mode, const char *text)
{
	char tmp[1100];
	size_t len = strlen(text);
	int fd, rv = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)) < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rv = -EIO;
	close(fd);
	if (rv == 0 && rename(tmp, path) != 0)
		rv = -errno;
	if (rv != 0)
		unlink(tmp);
	return rv;
}

/*
 * The refusal pages: ours, and links to squid's own templates for every
 * other page (error_directory replaces the whole set).
 */
static int
write_errors(const char *dir)
{
	static const struct { const char *name, *text; } pages[] = {
		/*
		 * The helper's message, as written: %o would quote it for
		 * HTML in this plain-text page (wt1&#39;s). The helper
		 * writes host-name bytes only.
		 */
		{ "ERR_MSC_POLICY", "Refused by the network policy: "
		    "@Squid{%'{message}note}\n" },
		{ "ERR_MSC_PORT", "Refused by the network policy: allowlist "
		    "mode allows HTTP on port 80 and CONNECT (HTTPS) on port "
		    "443 only\n" },
		{ "ERR_MSC_ADDRESS", "Refused by the network policy: %H "
		    "resolves to an address of the host, or a private, "
		    "loopback, link-local or metadata address\n" },
		{ NULL, NULL } };
	char path[1200];
	glob_t g;
	int rv;

	if ((rv = mkdir_p(dir, 0755)) != 0)
		return rv;
	if (glob(SQUID_TEMPLATES "/ERR_*", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *base = strrchr(g.gl_pathv[i], '/') + 1;

			snprintf(path, sizeof(path), "%.1000s/%.100s", dir, base);
			(void)unlink(path);
			(void)symlink(g.gl_pathv[i], path);
		}
		globfree(&g);
	}
	for (int i = 0; pages[i].name != NULL; i++) {
		snprintf(path, sizeof(path), "%.1000s/%s", dir, pages[i].name);
		if ((rv = write_text(path, 0644, pages[i].text)) != 0)
			return rv;
	}
	return 0;
}

/* squid.conf for this driver's proxy (a new string, or NULL). */
static char *
squid_conf(const struct dock_pol *p, const char *helper, bool root)
{
	char *s = NULL, dns[80] = "", *blocked;
	size_t len = 0;
	FILE *f;

	if ((blocked = dock_proxy_blocked(p->br)) == NULL)
		return NULL;
	if ((f = open_memstream(&s, &len)) == NULL) {
		free(blocked);
		return NULL;
	}
	if (p->dns != NULL)
		snprintf(dns, sizeof(dns), "dns_nameservers %s\n", p->dns);
	fprintf(f,
	    "http_port %s:%d\n"
	    "pid_filename none\n"
	    "cache deny all\n"
	    "cache_mem 0\n"
	    "coredump_dir %s\n"
	    "logformat msc %%tl %%>a %%ea %%rm %%ru %%>Hs %%Ss %%<a\n"
	    "access_log stdio:%s/decisions.log logformat=msc\n"
	    "cache_log stdio:%s/cache.log\n"
	    "logfile_rotate 0\n"
	    "%s"
	    "shutdown_lifetime 0 seconds\n"
	    "visible_hostname msc-proxy\n"
	    "httpd_suppress_version_string on\n"
	    "via off\n"
	    "forwarded_for delete\n"
	    "connect_timeout 10 seconds\n"
	    "error_directory %s/errors\n"
	    "%s"
	    "external_acl_type msc_policy ttl=0 negative_ttl=0 "
	    "children-max=8 children-startup=1 %%SRC %%DST %s %s/policy\n"
	    "acl msc_policy external msc_policy\n"
	    "acl msc_connect method CONNECT\n"
	    "acl msc_port443 port 443\n"
	    "acl msc_port80 port 80\n"
	    "acl msc_http proto HTTP\n"
	    "acl msc_blocked dst %s\n"
	    "deny_info ERR_MSC_POLICY msc_policy\n"
	    "deny_info ERR_MSC_PORT msc_port443\n"
	    "deny_info ERR_MSC_PORT msc_port80\n"
	    "deny_info ERR_MSC_PORT msc_http\n"
	    "deny_info ERR_MSC_ADDRESS msc_blocked\n"
	    "http_access deny !msc_policy\n"
	    "http_access deny msc_connect !msc_port443\n"
	    "http_access deny !msc_connect !msc_port80\n"
	    "http_access deny !msc_connect !msc_http\n"
	    "http_access deny msc_blocked\n"
	    "http_access allow all\n"
	    "%s",
	    p->gw, p->proxy_port, p->dir, p->dir, p->dir,
	    root ? "cache_effective_user " SQUID_USER "\n" : "", p->dir, dns,
	    helper, p->dir, blocked,
	    root ? "tcp_outgoing_mark " DOCK_POL_MARK_OUT " all\n" : "");
	for (size_t i = 0; i < p->ncreds; i++) {
		const struct dock_pol_cred *c = &p->creds[i];

		fprintf(f, "acl msc_cred%zu dstdomain %s\n"
		    "request_header_access %s deny msc_cred%zu\n"
		    "request_header_add %s \"", i, c->domain, c->header, i,
		    c->header);
		for (const char *v = c->value; *v != '\0'; v++)
			fputs(*v == '%' ? "%%" : (char[2]){ *v, 0 }, f);
		fprintf(f, "\" msc_cred%zu msc_http !msc_connect\n", i);
	}
	free(blocked);
	if (fclose(f) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* squid's shared memory segments of an earlier run on this port. */
static void
remove_stale_shm(int port)
{
	char pat[96];
	glob_t g;

	snprintf(pat, sizeof(pat), "/dev/shm/mscproxy%d-*", port);
	if (glob(pat, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		(void)unlink(g.gl_pathv[i]);
	globfree(&g);
}

static int
spawn_squid(struct dock_pol *p, char *conf_path, char *err, size_t errlen)
{
	char name[48];
	pid_t pid;

	snprintf(name, sizeof(name), "mscproxy%d", p->proxy_port);
	remove_stale_shm(p->proxy_port);
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		execl(squid_path(), "squid", "-N", "-n", name, "-f",
		    conf_path, (char *)NULL);
		_exit(127);
	}
	p->proxy_pid = pid;
	for (int waited = 0; waited < T_PROXY_START_MS; waited += 50) {
		int st;

		if (waitpid(pid, &st, WNOHANG) == pid) {
			p->proxy_pid = 0;
			snprintf(err, errlen, "the allowlist proxy (%s) exited at "
			    "start (status %d): see %s/cache.log", squid_path(),
			    WIFEXITED(st) ? WEXITSTATUS(st) : -1, p->dir);
			return -EIO;
		}
		if (port_answers(p->gw, p->proxy_port))
			return 0;
		nanosleep(&(struct timespec){ 0, 50 * 1000000 }, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	p->proxy_pid = 0;
	snprintf(err, errlen, "the allowlist proxy did not listen within %d s",
	    T_PROXY_START_MS / 1000);
	return -ETIMEDOUT;
}

static int
proxy_start(struct dock_driver *d, int want, char *err, size_t errlen)
{
	struct dock_pol *p = &d->pol;
	const char *helper = helper_path();
	bool root = geteuid() == 0;
	struct passwd *pw = root ? getpwnam(SQUID_USER) : NULL;
	char path[1024], base[256], *conf;
	int rv, port;

	if (p->gw[0] == '\0') {
		snprintf(err, errlen, "the sandbox network has no gateway "
		    "address for the allowlist proxy");
		return -ENXIO;
	}
	if (access(squid_path(), X_OK) != 0 || helper == NULL) {
		snprintf(err, errlen, "allowlist mode needs squid (Debian "
		    "package squid-openssl) and msc-proxy-policy: %s is %s",
		    helper == NULL ? "msc-proxy-policy" : squid_path(),
		    "missing");
		return -ENOENT;
	}
	if (root && pw == NULL) {
		snprintf(err, errlen, "squid's user '%s' does not exist",
		    SQUID_USER);
		return -ENOENT;
	}
	if (want > 0 && port_free(p->gw, want))
		port = want;
	else if ((port = pick_port(p->gw, d->cfg->driver_id)) < 0) {
		snprintf(err, errlen, "no free port for the allowlist proxy in "
		    "%d-%d", DOCK_PROXY_PORT_MIN,
		    DOCK_PROXY_PORT_MIN + DOCK_PROXY_PORT_SPAN - 1);
		return port;
	}
	p->proxy_port = port;
	if ((rv = dock_pol_base(base, sizeof(base))) != 0)
		goto fail;
	snprintf(p->dir, sizeof(p->dir), "%.200s/%d", base, port);
	snprintf(path, sizeof(path), "%s/policy", p->dir);
	if ((rv = mkdir_p(path, 0755)) != 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/errors", p->dir);
	if ((rv = write_errors(path)) != 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/decisions.log", p->dir);
	if ((rv = squid_file(path, pw)) != 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/cache.log", p->dir);
	if ((rv = squid_file(path, pw)) != 0)
		goto fail;
	if (pw != NULL && chown(p->dir, pw->pw_uid, 0) != 0) {
		rv = -errno;
		goto fail;
	}
	if ((conf = squid_conf(p, helper, root)) == NULL)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/squid.conf", p->dir);
	rv = write_text(path, 0600, conf);
	explicit_bzero(conf, strlen(conf));     /* it may hold credentials */
	free(conf);
	if (rv != 0)
		goto fail;
	if ((rv = spawn_squid(p, path, err, errlen)) != 0)
		return rv;
	msc_log_info("network: the allowlist proxy listens on %s:%d (squid "
	    "pid %d; decision log %s/decisions.log)%s", p->gw, port,
	    (int)p->proxy_pid, p->dir, root ? "" : "; not root: the kernel "
	    "does not check the addresses it connects to (squid does)");
	return 0;
fail:
	snprintf(err, errlen, "cannot prepare the allowlist proxy's folder "
	    "%s: %s", p->dir, strerror(-rv));
	return rv;
}

int
dock_proxy_ensure(struct dock_driver *d, int want, char *err, size_t errlen)
{
	struct dock_pol *p = &d->pol;
	int st;

	if (p->proxy_pid > 0) {
		if (waitpid(p->proxy_pid, &st, WNOHANG) == 0)
			return 0;
		msc_log_warn("network: the allowlist proxy (pid %d) died; "
		    "starting it again", (int)p->proxy_pid);
		p->proxy_pid = 0;
	}
	return proxy_start(d, want > 0 ? want : p->proxy_port, err, errlen);
}

bool
dock_proxy_answers(struct dock_driver *d, int port)
{
	return d->pol.gw[0] != '\0' && port_answers(d->pol.gw, port);
}

int
dock_proxy_serve(struct dock_driver *d, int port, bool mine, char *err,
    size_t errlen)
{
	struct dock_pol *p = &d->pol;
	int rv;

	if (p->proxy_port == port && p->dir[0] != '\0')
		return dock_proxy_ensure(d, port, err, errlen);
	/* Ours of the driver's earlier run may be ending (PDEATHSIG). */
	for (int i = 0; i < 40 && mine && p->proxy_pid == 0 &&
	    port_answers(p->gw, port); i++)
		nanosleep(&(struct timespec){ 0, 50 * 1000000 }, NULL);
	if (port_answers(p->gw, port)) {
		msc_log_info("network: a proxy this driver did not start "
		    "answers on %s:%d", p->gw, port);
		return 1;               /* another proxy serves it */
	}
	if (p->proxy_pid == 0 && (rv = dock_proxy_ensure(d, port, err,
	    errlen)) != 0)
		return rv;
	if (p->proxy_port == port)
		return 0;
	snprintf(err, errlen, "no proxy serves its port %d and this "
	    "driver's listens on %d", port, p->proxy_port);
	return -EADDRINUSE;
}

void
dock_proxy_stop(struct dock_driver *d)
{
	struct dock_pol *p = &d->pol;

	if (p->proxy_pid <= 0)
		return;
	kill(p->proxy_pid, SIGTERM);
	for (int i = 0; i < 40; i++) {
		if (waitpid(p->proxy_pid, NULL, WNOHANG) != 0)
			break;
		nanosleep(&(struct timespec){ 0, 25 * 1000000 }, NULL);
		if (i == 39) {
			kill(p->proxy_pid, SIGKILL);
			waitpid(p->proxy_pid, NULL, 0);
		}
	}
	p->proxy_pid = 0;
	remove_stale_shm(p->proxy_port);
}
