/*
 * sess_harness.h - the real session service over the real inventory
 * service over one or two fake drivers (d1, d2), all over inproc://, and
 * clients calling the session and the inventory over the wire. Shared by
 * the test_session_*.c files; header-only.
 */
#ifndef SESS_HARNESS_H
#define SESS_HARNESS_H

/* Room for a session id (the service makes 40 characters). */
#define SH_ID_SIZE 64

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core_util.h"
#include "driver.pb-c.h"
#include "fake_driver.h"
#include "inventory.h"
#include "inventory.pb-c.h"
#include "msc_fleet.h"
#include "session.h"
#include "session.pb-c.h"

#define SH_SESS_URL "inproc://sh-session"
#define SH_SESS2_URL "inproc://sh-session-2"
#define SH_INV_URL "inproc://sh-inventory"
#define SH_MAX_DRIVERS 2
#define SH_CALL_MS 15000

static const char *const sh_urls[SH_MAX_DRIVERS] = { "inproc://sh-d1",
	"inproc://sh-d2" };
static const char *const sh_ids[SH_MAX_DRIVERS] = { "d1", "d2" };

static struct {
	struct msc_cfg cfg;
	struct msc_fleet *fleet;
	struct fake_driver *d[SH_MAX_DRIVERS];
	int nd;
	struct inv_service *inv;
	struct sess_service *sess;
	struct msc_client *cli;         /* to the session service */
	struct msc_client *inv_cli;     /* to the inventory */
} sh;

/* Starts nd drivers, the inventory and the session service; `flags`
 * (NULL-terminated, may be NULL) are more command-line flags. */
static inline int
sh_start(int nd, const char *const *flags)
{
	char specs[SH_MAX_DRIVERS][64];
	const char *argv[24];
	int n = 0;

	memset(&sh, 0, sizeof(sh));
	sh.nd = nd;
	for (int i = 0; i < nd; i++) {
		snprintf(specs[i], sizeof(specs[i]), "%s=%s", sh_ids[i],
		    sh_urls[i]);
		argv[n++] = "--driver-url";
		argv[n++] = specs[i];
		if (fake_driver_start(sh_urls[i], sh_ids[i], &sh.d[i]) != 0)
			return -1;
	}
	for (; flags != NULL && *flags != NULL && n < 23; flags++)
		argv[n++] = *flags;
	argv[n] = NULL;
	if (cu_cfg(&sh.cfg, argv) != 0 ||
	    msc_fleet_open(&sh.cfg, NULL, &sh.fleet) != 0 ||
	    inv_start(SH_INV_URL, sh.fleet, &sh.inv) != 0 ||
	    sess_start(&sh.cfg, SH_SESS_URL, SH_INV_URL, sh.fleet,
		&sh.sess) != 0 ||
	    msc_client_open(SH_SESS_URL, NULL, &sh.cli) != 0 ||
	    msc_client_open(SH_INV_URL, NULL, &sh.inv_cli) != 0)
		return -1;
	return 0;
}

static inline int
sh_stop(void **state)
{
	(void)state;
	/* After a failed assertion: let the services finish their calls. */
	for (int i = 0; i < sh.nd; i++)
		if (sh.d[i] != NULL)
			fake_driver_let_go_all(sh.d[i]);
	msc_client_close(sh.cli);
	msc_client_close(sh.inv_cli);
	sess_stop(sh.sess);
	inv_stop(sh.inv);
	msc_fleet_close(sh.fleet);
	for (int i = 0; i < sh.nd; i++)
		fake_driver_free(sh.d[i]);
	msc_cfg_fini(&sh.cfg);
	return 0;
}

static inline Msc__V1__Code
sh_call_on(struct msc_client *c, const ProtobufCServiceDescriptor *svc,
    const char *method, const ProtobufCMessage *req, ProtobufCMessage **respp)
{
	ProtobufCMessage *resp = NULL;
	char msg[1024];
	Msc__V1__Code code;

	code = msc_client_call_sync(c, svc, method, req, SH_CALL_MS, &resp, msg,
	    sizeof(msg));
	if (respp != NULL)
		*respp = resp;
	else if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	return code;
}

static inline Msc__V1__Code
sh_call(const char *method, const ProtobufCMessage *req,
    ProtobufCMessage **respp)
{
	return sh_call_on(sh.cli, &msc__v1__session__descriptor, method, req,
	    respp);
}

/* Opens a session (idle_timeout_s 0: never expires) into id[SH_ID_SIZE]. */
static inline void
sh_open_on(struct msc_client *c, char *id, uint32_t idle_timeout_s)
{
	Msc__V1__OpenRequest o = MSC__V1__OPEN_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;

	o.client_name = "unit";
	o.idle_timeout_s = idle_timeout_s;
	assert_int_equal(sh_call_on(c, &msc__v1__session__descriptor, "Open",
			     &o.base, &resp),
	    MSC__V1__CODE__OK);
	snprintf(id, SH_ID_SIZE, "%s", ((Msc__V1__SessionRef *)resp)->session_id);
	protobuf_c_message_free_unpacked(resp, NULL);
	assert_true(id[0] != '\0');
}

static inline void
sh_open(char *id, uint32_t idle_timeout_s)
{
	sh_open_on(sh.cli, id, idle_timeout_s);
}

static inline Msc__V1__Code
sh_ref_call(const char *method, const char *sid)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;

	ref.session_id = (char *)sid;
	return sh_call(method, &ref.base, NULL);
}

/*
 * terminal_execute "echo hi" in session sid; computer id (NULL: the
 * default) in mode temporary (-1: unset). *rp (may be NULL) the reply.
 */
static inline Msc__V1__Code
sh_exec(const char *sid, const char *id, int temporary,
    Msc__V1__TerminalExecReply **rp)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;

	r.session_id = (char *)sid;
	r.command = "echo hi";
	if (id != NULL) {
		r.has_computer_id = true;
		r.computer_id = (char *)id;
	}
	if (temporary >= 0) {
		r.has_temporary = true;
		r.temporary = temporary != 0;
	}
	return sh_call("TerminalExec", &r.base, (ProtobufCMessage **)rp);
}

static inline void
sh_exec_async(const char *sid, const char *id, struct cu_answers *ans)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;

	r.session_id = (char *)sid;
	r.command = "echo hi";
	if (id != NULL) {
		r.has_computer_id = true;
		r.computer_id = (char *)id;
	}
	assert_int_equal(msc_client_call(sh.cli, &msc__v1__session__descriptor,
			     "TerminalExec", &r.base, SH_CALL_MS, cu_answered,
			     ans),
	    0);
}

/* computer_create (temporary -1: unset) in session sid. */
static inline Msc__V1__Code
sh_create(const char *sid, const char *id, int temporary,
    Msc__V1__Computer **cp)
{
	Msc__V1__ComputerRequest r = MSC__V1__COMPUTER_REQUEST__INIT;

	r.session_id = (char *)sid;
	r.computer_id = (char *)(id != NULL ? id : "");
	if (temporary >= 0) {
		r.has_temporary = true;
		r.temporary = temporary != 0;
	}
	return sh_call("CreateComputer", &r.base, (ProtobufCMessage **)cp);
}

static inline Msc__V1__Code
sh_delete(const char *sid, const char *id)
{
	Msc__V1__ComputerRequest r = MSC__V1__COMPUTER_REQUEST__INIT;

	r.session_id = (char *)sid;
	r.computer_id = (char *)id;
	return sh_call("DeleteComputer", &r.base, NULL);
}

/* The default computer's id of session sid (runs a command). */
static inline void
sh_default_id(const char *sid, char *id, size_t len)
{
	Msc__V1__TerminalExecReply *rep = NULL;

	assert_int_equal(sh_exec(sid, NULL, -1, &rep), MSC__V1__CODE__OK);
	snprintf(id, len, "%s", rep->computer_id);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
}

static inline void
sh_pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

#endif /* SESS_HARNESS_H */
