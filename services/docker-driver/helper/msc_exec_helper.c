/*
 * msc_exec_helper.c - the exec helper: a static program that runs as a
 * computer's PID 1 (its Entrypoint, bind-mounted read-only from the host)
 * and starts commands on request, so an exec costs a fork instead of an
 * Engine API exec (a runc start).
 *
 *   msc-exec-helper [SOCKET [--lease-ms N]]      (default /.msc/sock)
 *   msc-exec-helper --process ...                (helper_process.c)
 *   msc-exec-helper --file ...                   (helper_file.c)
 *
 * With a lease (a temporary computer, helper_lease.c) it ends the
 * container as on SIGTERM once no driver renewed the lease for N ms.
 *
 * As init it reaps every orphan and, on SIGTERM/SIGINT/SIGQUIT, forwards
 * the signal to every process and exits once they are gone (at most
 * HX_STOP_MS later), so `docker stop` is fast. Other signals (HUP, USR1,
 * USR2) are forwarded. It listens on SOCKET (in this container's own
 * small /.msc tmpfs, which the driver reaches through our /proc entry)
 * and forks one session process per connection (helper_session.c), ahead
 * of it: a spare session waits in accept, so a command's path has one
 * fork (its own), not two. A
 * session that dies abnormally (say the sandboxed code killed it) has its
 * exec's processes killed by marker here. It is not dumpable, so the
 * sandboxed code cannot ptrace it. Not PID 1 (tests on the host, or
 * --init), it makes itself a child subreaper instead. If it cannot listen it goes on
 * as a plain init: the driver then falls back to the Engine API exec.
 */
#include "helper.h"
#include "helper_lease.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HX_MAX_SESSIONS	1024
#define HX_STOP_MS	3000

struct session {
	pid_t pid;
	char marker[33];
};

static struct session sessions[HX_MAX_SESSIONS];
static int nsessions;
static pid_t spare;     /* the spare session waiting in accept, or 0 */

static int
listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	(void)unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(path, 0666) != 0 || listen(fd, 128) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* Reaps every child; kills the exec of a session that died badly. */
static void
reap(void)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (int i = 0; i < nsessions; i++) {
			if (sessions[i].pid != pid)
				continue;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				hx_kill_exec(sessions[i].marker, 0);
			if (pid == spare)
				spare = 0;
			sessions[i] = sessions[--nsessions];
			break;
		}
	}
}

static void
serve(int lfd, const sigset_t *mask)
{
	struct session *s;
	int c;

	if ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return;
	if (nsessions == HX_MAX_SESSIONS) {
		close(c);
		return;
	}
	s = &sessions[nsessions];
	if (hx_marker(s->marker) != 0 || (s->pid = fork()) < 0) {
		close(c);
		return;
	}
	if (s->pid == 0) {
		close(lfd);
		sigprocmask(SIG_UNBLOCK, mask, NULL);
		_exit(hx_session(c, s->marker));
	}
	nsessions++;
	close(c);
}

/*
 * The spare session: a session process forked ahead of its connection,
 * which accepts it itself and then tells us its pid on `taken` (so the
 * next one is forked while its command runs, not before). The fork and
 * our wake-up are off a command's path. While one waits, we do not
 * accept; without one (the session table full, a fork failed) we serve
 * as above.
 */
static int taken[2] = { -1, -1 };

static void
spare_fork(int lfd, const sigset_t *mask)
{
	struct session *s;
	pid_t self, parent = getpid();
	int c;

	if (spare != 0 || lfd < 0 || taken[0] < 0 ||
	    nsessions >= HX_MAX_SESSIONS - 1)
		return;
	s = &sessions[nsessions];
	if (hx_marker(s->marker) != 0 || (s->pid = fork()) < 0)
		return;
	if (s->pid == 0) {
		/* A spare ends with us (we may not be PID 1 and be killed):
		 * nothing is left waiting; a session once taken lives on, as
		 * one forked after its connection does. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		close(taken[0]);
		sigprocmask(SIG_UNBLOCK, mask, NULL);
		do
			c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		while (c < 0 && (errno == EINTR || errno == ECONNABORTED));
		(void)prctl(PR_SET_PDEATHSIG, 0);
		if (c < 0) {
			/* Out of descriptors or memory: the next spare waits
			 * too, so the helper does not fork in a loop. */
			struct timespec pause = { 0, 100 * 1000 * 1000 };

			nanosleep(&pause, NULL);
		}
		self = getpid();
		(void)!write(taken[1], &self, sizeof(self));
		close(taken[1]);
		close(lfd);
		_exit(c < 0 ? 0 : hx_session(c, s->marker));
	}
	spare = s->pid;
	nsessions++;
}

/* The spare's pids that took a connection (or died: reap). */
static void
spare_taken(void)
{
	pid_t pid;

	while (read(taken[0], &pid, sizeof(pid)) == (ssize_t)sizeof(pid))
		if (pid == spare)
			spare = 0;
}

/* Forwards a stop signal and waits (bounded) for everything to end. */
static void
stop(int sfd, int sig)
{
	int64_t until = hx_now_ms() + HX_STOP_MS;

	if (getpid() == 1)
		(void)kill(-1, sig);
	else
		for (int i = 0; i < nsessions; i++)
			(void)kill(sessions[i].pid, SIGKILL);
	for (;;) {
		struct pollfd p = { .fd = sfd, .events = POLLIN };
		struct signalfd_siginfo si;
		int64_t left = until - hx_now_ms();
		pid_t pid;

		while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (pid < 0 && errno == ECHILD)
			break;
		if (left <= 0)
			break;
		(void)poll(&p, 1, (int)left);
		while (read(sfd, &si, sizeof(si)) > 0)
			;
	}
	_exit(128 + sig);
}

int
main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/.msc/sock";
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGQUIT,
		SIGHUP, SIGUSR1, SIGUSR2 };
	sigset_t mask;
	struct hx_lease lease;
	int sfd, lfd;

	if (argc > 1 && strcmp(argv[1], "--process") == 0 && getpid() != 1)
		return hx_process_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "--file") == 0 && getpid() != 1)
		return hx_file_main(argc - 1, argv + 1);
	if (getpid() != 1)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	/*
	 * Not dumpable: the sandboxed code (root in the container, without
	 * CAP_SYS_PTRACE) cannot ptrace the helper or its session processes,
	 * nor read their memory. The commands they exec are dumpable again.
	 */
	if (prctl(PR_SET_DUMPABLE, 0) != 0)
		hx_log("PR_SET_DUMPABLE: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&mask, sigs[i]);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		hx_log("signalfd: %s", strerror(errno));
		return 1;
	}
	/* The lease socket first: once `path` answers, both do. */
	(void)hx_lease_init(&lease, argc, argv, path);
	if ((lfd = listen_on(path)) < 0)
		hx_log("cannot listen on %s: %s; serving as init only", path,
		    strerror(-lfd));
	if (pipe2(taken, O_CLOEXEC | O_NONBLOCK) != 0)
		taken[0] = taken[1] = -1;       /* then a fork per connection */
	for (;;) {
		struct pollfd p[4];
		struct signalfd_siginfo si;

		spare_fork(lfd, &mask);
		p[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = spare != 0 ? -1 : lfd,
			.events = POLLIN };
		p[2] = (struct pollfd){ .fd = lease.fd, .events = POLLIN };
		p[3] = (struct pollfd){ .fd = taken[0], .events = POLLIN };
		if (poll(p, 4, hx_lease_timeout(&lease, -1)) < 0 &&
		    errno != EINTR)
			continue;
		if (p[3].revents & POLLIN)
			spare_taken();
		if (hx_lease_check(&lease, p[2].revents & POLLIN)) {
			hx_log("the lease lapsed: no driver renewed it; ending "
			       "this temporary computer");
			if (lfd >= 0)
				(void)unlink(path);
			stop(sfd, SIGTERM);
		}
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			int sig = (int)si.ssi_signo;

			if (sig == SIGCHLD)
				continue;
			if (sig == SIGTERM || sig == SIGINT || sig == SIGQUIT) {
				if (lfd >= 0)
					(void)unlink(path);
				stop(sfd, sig);
			}
			if (getpid() == 1)
				(void)kill(-1, sig);
		}
		reap();
		if (lfd >= 0 && (p[1].revents & POLLIN))
			serve(lfd, &mask);
	}
}
