/*
 * test_docker_runflags.c - `docker run` flags onto a create body.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "docker_runflags.h"

static char	errbuf[2048];

/* Applies flags to a fresh body; returns it (or NULL on failure). */
static json_t *
apply_n(int *rcp, size_t n, const char *const *flags)
{
	json_t	*body = json_object();
	int	 rc;

	assert_non_null(body);
	errbuf[0] = '\0';
	rc = dock_runflags_apply(flags, n, body, errbuf, sizeof(errbuf));
	if (rcp != NULL)
		*rcp = rc;
	if (rc != 0) {
		json_decref(body);
		return NULL;
	}
	return body;
}

static int
collect(const char **f, size_t max, const char *first, va_list ap)
{
	const char	*s;
	size_t		 n = 0;

	for (s = first; s != NULL; s = va_arg(ap, const char *)) {
		assert_true(n < max);
		f[n++] = s;
	}
	return (int)n;
}

/* Applies NULL-terminated flags that must be accepted. */
static json_t *
ok_(const char *first, ...)
{
	const char	*f[32];
	va_list		 ap;
	json_t		*b;
	int		 n, rc;

	va_start(ap, first);
	n = collect(f, 32, first, ap);
	va_end(ap);
	b = apply_n(&rc, (size_t)n, f);
	if (rc != 0)
		fail_msg("unexpected error: %s", errbuf);
	return b;
}

/* Applies NULL-terminated flags that must be refused with -EINVAL. */
static void
bad_(const char *first, ...)
{
	const char	*f[32];
	va_list		 ap;
	json_t		*b;
	int		 n, rc;

	va_start(ap, first);
	n = collect(f, 32, first, ap);
	va_end(ap);
	b = apply_n(&rc, (size_t)n, f);
	if (b != NULL) {
		json_decref(b);
		fail_msg("accepted %s", f[0]);
	}
	assert_int_equal(rc, -EINVAL);
	assert_true(errbuf[0] != '\0');
}

#define APPLY(...)	ok_(__VA_ARGS__, NULL)
#define REJECT(...)	bad_(__VA_ARGS__, NULL)

/* Compares body with the JSON text `want`. */
static void
expect(json_t *body, const char *want)
{
	json_t	*w = json_loads(want, 0, NULL);
	char	*got;

	assert_non_null(w);
	if (!json_equal(body, w)) {
		got = json_dumps(body, JSON_SORT_KEYS | JSON_COMPACT);
		fail_msg("got %s\nwant %s", got, want);
	}
	json_decref(w);
	json_decref(body);
}

static void
test_scalars(void **state)
{
	(void)state;
	expect(APPLY("--pids-limit=512", "--memory=512m", "--memory-swap=-1",
	    "--shm-size 64m", "--cpus=1.5", "--cpuset-cpus=0-1",
	    "--network=none", "--ipc=private", "--runtime runc",
	    "--read-only", "--init", "--privileged=false"),
	    "{\"HostConfig\":{\"PidsLimit\":512,\"Memory\":536870912,"
	    "\"MemorySwap\":-1,\"ShmSize\":67108864,\"NanoCpus\":1500000000,"
	    "\"CpusetCpus\":\"0-1\",\"NetworkMode\":\"none\","
	    "\"IpcMode\":\"private\",\"Runtime\":\"runc\","
	    "\"ReadonlyRootfs\":true,\"Init\":true,\"Privileged\":false}}");
	expect(APPLY("-m 1g", "--memory-swap", "2G", "--net", "bridge",
	    "-u 1000:1000", "-w/work", "-h", "box", "--privileged"),
	    "{\"HostConfig\":{\"Memory\":1073741824,\"MemorySwap\":2147483648,"
	    "\"NetworkMode\":\"bridge\",\"Privileged\":true},"
	    "\"User\":\"1000:1000\",\"WorkingDir\":\"/work\","
	    "\"Hostname\":\"box\"}");
	expect(APPLY("--memory=100k", "--shm-size=1.5m", "--memory-swap=2gb"),
	    "{\"HostConfig\":{\"Memory\":102400,\"ShmSize\":1572864,"
	    "\"MemorySwap\":2147483648}}");
	expect(APPLY("--pids-limit", "-1"),
	    "{\"HostConfig\":{\"PidsLimit\":-1}}");
}

static void
test_lists_and_maps(void **state)
{
	json_t	*b;

	(void)state;
	expect(APPLY("--cap-add=NET_ADMIN", "--cap-add SYS_PTRACE",
	    "--cap-drop=ALL", "--security-opt=no-new-privileges",
	    "--dns=1.1.1.1", "--dns 8.8.8.8", "--add-host=db:10.0.0.2",
	    "--add-host", "v6=::1", "--sysctl net.ipv4.ip_forward=1",
	    "--storage-opt=size=10G"),
	    "{\"HostConfig\":{\"CapAdd\":[\"NET_ADMIN\",\"SYS_PTRACE\"],"
	    "\"CapDrop\":[\"ALL\"],\"SecurityOpt\":[\"no-new-privileges\"],"
	    "\"Dns\":[\"1.1.1.1\",\"8.8.8.8\"],"
	    "\"ExtraHosts\":[\"db:10.0.0.2\",\"v6:::1\"],"
	    "\"Sysctls\":{\"net.ipv4.ip_forward\":\"1\"},"
	    "\"StorageOpt\":{\"size\":\"10G\"}}}");
	expect(APPLY("-e A=1", "--env=B=x y", "-eC=3", "-e=D=4",
	    "--label=team=ai", "-l solo"),
	    "{\"Env\":[\"A=1\",\"B=x y\",\"C=3\",\"D=4\"],"
	    "\"Labels\":{\"team\":\"ai\",\"solo\":\"\"}}");

	/* "-e NAME" copies the variable from our environment when set. */
	setenv("KT_RUNFLAG_TEST", "v1", 1);
	unsetenv("KT_RUNFLAG_UNSET");
	expect(APPLY("-e KT_RUNFLAG_TEST", "-e KT_RUNFLAG_UNSET"),
	    "{\"Env\":[\"KT_RUNFLAG_TEST=v1\"]}");

	/* Flags add to what the body already has. */
	b = json_pack("{s:[s],s:{s:s},s:{s:s}}", "Env", "X=1", "Labels",
	    "kilntainers", "true", "HostConfig", "NetworkMode", "none");
	{
		const char *const f[] = { "-e Y=2", "--label=k=v",
		    "--cap-add=X" };

		assert_int_equal(dock_runflags_apply(f, 3, b, errbuf,
		    sizeof(errbuf)), 0);
	}
	expect(b, "{\"Env\":[\"X=1\",\"Y=2\"],\"Labels\":{\"kilntainers\":"
	    "\"true\",\"k\":\"v\"},\"HostConfig\":{\"NetworkMode\":\"none\","
	    "\"CapAdd\":[\"X\"]}}");
}

static void
test_composites(void **state)
{
	(void)state;
	expect(APPLY("--tmpfs=/run", "--tmpfs /tmp:rw,size=64m",
	    "--ulimit nofile=1024:2048", "--ulimit=nproc=100",
	    "--ulimit=nofile=10"),
	    "{\"HostConfig\":{\"Tmpfs\":{\"/run\":\"\","
	    "\"/tmp\":\"rw,size=64m\"},\"Ulimits\":["
	    "{\"Name\":\"nproc\",\"Soft\":100,\"Hard\":100},"
	    "{\"Name\":\"nofile\",\"Soft\":10,\"Hard\":10}]}}");
	expect(APPLY("--device=/dev/fuse", "--device=/dev/sda:/dev/xvda:r",
	    "--device=/dev/kvm:rw", "--device /dev/a:/dev/b"),
	    "{\"HostConfig\":{\"Devices\":["
	    "{\"PathOnHost\":\"/dev/fuse\",\"PathInContainer\":\"/dev/fuse\","
	    "\"CgroupPermissions\":\"rwm\"},"
	    "{\"PathOnHost\":\"/dev/sda\",\"PathInContainer\":\"/dev/xvda\","
	    "\"CgroupPermissions\":\"r\"},"
	    "{\"PathOnHost\":\"/dev/kvm\",\"PathInContainer\":\"/dev/kvm\","
	    "\"CgroupPermissions\":\"rw\"},"
	    "{\"PathOnHost\":\"/dev/a\",\"PathInContainer\":\"/dev/b\","
	    "\"CgroupPermissions\":\"rwm\"}]}}");
	expect(APPLY("--gpus=all", "--gpus 2", "--gpus=\"device=0,1\"",
	    "--gpus=count=1,driver=nvidia,capabilities=compute"),
	    "{\"HostConfig\":{\"DeviceRequests\":["
	    "{\"Driver\":\"\",\"Count\":-1,\"DeviceIDs\":[],"
	    "\"Capabilities\":[[\"gpu\"]]},"
	    "{\"Driver\":\"\",\"Count\":2,\"DeviceIDs\":[],"
	    "\"Capabilities\":[[\"gpu\"]]},"
	    "{\"Driver\":\"\",\"Count\":0,\"DeviceIDs\":[\"0\",\"1\"],"
	    "\"Capabilities\":[[\"gpu\"]]},"
	    "{\"Driver\":\"nvidia\",\"Count\":1,\"DeviceIDs\":[],"
	    "\"Capabilities\":[[\"compute\"]]}]}}");
	expect(APPLY("-v /srv/data:/data:ro", "--volume=cache:/cache",
	    "-v=/anon"),
	    "{\"HostConfig\":{\"Binds\":[\"/srv/data:/data:ro\","
	    "\"cache:/cache\"]},\"Volumes\":{\"/anon\":{}}}");
	expect(APPLY("--mount type=bind,source=/src,target=/dst,readonly,"
	    "bind-propagation=rslave",
	    "--mount=type=volume,src=vol,dst=/v,volume-nocopy,"
	    "volume-label=a=b,volume-driver=local,volume-opt=o=bind",
	    "--mount=type=tmpfs,target=/t,tmpfs-size=64m,tmpfs-mode=1777",
	    "--mount=target=/anon"),
	    "{\"HostConfig\":{\"Mounts\":["
	    "{\"Type\":\"bind\",\"Source\":\"/src\",\"Target\":\"/dst\","
	    "\"ReadOnly\":true,\"BindOptions\":{\"Propagation\":\"rslave\"}},"
	    "{\"Type\":\"volume\",\"Source\":\"vol\",\"Target\":\"/v\","
	    "\"VolumeOptions\":{\"NoCopy\":true,\"Labels\":{\"a\":\"b\"},"
	    "\"DriverConfig\":{\"Name\":\"local\",\"Options\":{\"o\":"
	    "\"bind\"}}}},"
	    "{\"Type\":\"tmpfs\",\"Target\":\"/t\",\"TmpfsOptions\":"
	    "{\"SizeBytes\":67108864,\"Mode\":1023}},"
	    "{\"Type\":\"volume\",\"Target\":\"/anon\"}]}}");
}

static void
test_errors(void **state)
{
	(void)state;
	REJECT("--foo=bar");
	assert_non_null(strstr(errbuf, "unsupported --docker-run-flag "
	    "'--foo'; supported: "));
	assert_non_null(strstr(errbuf, "--pids-limit"));
	assert_non_null(strstr(errbuf, "--mount"));
	REJECT("-x");
	assert_non_null(strstr(errbuf, "unsupported --docker-run-flag '-x'"));

	REJECT("--memory");
	assert_string_equal(errbuf, "--docker-run-flag '--memory' needs a "
	    "value (write '--memory=VALUE')");
	REJECT("--memory=");
	REJECT("-e");
	REJECT("--memory", "--init");
	assert_non_null(strstr(errbuf, "needs a value"));

	REJECT("--rm");
	assert_string_equal(errbuf, "--docker-run-flag '--rm' is managed by "
	    "the server and cannot be set");
	REJECT("-d");
	REJECT("--detach");
	REJECT("--name=foo");
	assert_string_equal(errbuf, "--docker-run-flag '--name' is managed by "
	    "the server and cannot be set");
	REJECT("-i");
	REJECT("-t");
	REJECT("-it");
	REJECT("--interactive");
	REJECT("--tty");
	REJECT("--entrypoint=/bin/sh");
	REJECT("--restart=always");

	REJECT("--memory=lots");
	REJECT("--memory=12x");
	REJECT("--pids-limit=12a");
	REJECT("--cpus=0");
	REJECT("--cpus=abc");
	REJECT("--read-only=maybe");
	REJECT("--tmpfs=relative");
	REJECT("--ulimit=nofile");
	REJECT("--ulimit=bogus=1");
	REJECT("--ulimit=nofile=20:10");
	REJECT("--device=dev/sda");
	REJECT("--device=/dev/sda:/dev/b:rwx");
	REJECT("--gpus=0");
	REJECT("--gpus=foo");
	REJECT("--add-host=nohost");
	REJECT("--sysctl=novalue");
	REJECT("-v relative:also-relative");
	REJECT("-v relative");
	REJECT("--mount=type=bind,target=/x");
	REJECT("--mount=type=bind,source=/a");
	REJECT("--mount=type=nfs,target=/x");
	REJECT("--mount=type=tmpfs,source=/a,target=/x");
	REJECT("--mount=type=bind,source=/a,target=/x,tmpfs-size=1m");
	REJECT("--mount=type=volume,target=/x,bogus=1");
	assert_non_null(strstr(errbuf, "unknown --mount key 'bogus'"));
	REJECT("value-without-flag");
	REJECT("-e A=1", "stray");
	REJECT("--init", "stray");
}

static void
test_empty(void **state)
{
	json_t	*b = json_object();

	(void)state;
	assert_int_equal(dock_runflags_apply(NULL, 0, b, errbuf,
	    sizeof(errbuf)), 0);
	assert_int_equal(json_object_size(b), 0);
	json_decref(b);
	{
		const char *const f[] = { "--init" };

		/* A small error buffer, or none, is fine. */
		b = json_object();
		assert_int_equal(dock_runflags_apply(f, 1, b, NULL, 0), 0);
		json_decref(b);
	}
	{
		const char *const f[] = { "--bogus" };
		char	small[8];

		b = json_object();
		assert_int_equal(dock_runflags_apply(f, 1, b, small,
		    sizeof(small)), -EINVAL);
		assert_int_equal(strlen(small), 7);
		json_decref(b);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_lists_and_maps),
		cmocka_unit_test(test_composites),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
