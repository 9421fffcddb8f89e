/*
 * session_output.c - bounding the output a reply carries; see
 * session_output.h.
 */
#include "session_int.h"
#include "session_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_random.h"
#include "msc_utf8.h"

#define OUT_DIR "/tmp/kilntainers-output"
/* A stream longer than this is not sent back to be saved. */
#define OUT_SAVE_MAX (32u * 1024 * 1024)
#define OUT_SAVE_MS 30000
#define OUT_PATH_MAX 96
#define OUT_WHY_MAX 200

/* Writes stdin to $1 (a fresh name), readable by the computer's user. */
static const char save_sh[] =
	"umask 077 && mkdir -p " OUT_DIR " && cat > \"$1\"";

struct out_save {
	struct sess_service *s;
	struct sess_output_to to;
	Msc__V1__ExecResult *res;       /* owned */
	Msc__V1__TerminalExecReply *rep;
	sess_output_done done;
	void *arg;
	size_t share[2];
	bool cut[2];
	int next;                       /* the stream being saved */
	char path[2][OUT_PATH_MAX];     /* "" until saved */
	char why[2][OUT_WHY_MAX];       /* why it was not */
};

static const char *const stream_name[2] = { "stdout", "stderr" };

static const ProtobufCBinaryData *
stream(const struct out_save *o, int i)
{
	return i == 0 ? &o->res->stdout : &o->res->stderr;
}

static bool
is_cont(uint8_t b)
{
	return (b & 0xc0) == 0x80;
}

int
sess_output_cut(const uint8_t *in, size_t len, size_t share,
    const char *name, const char *file, const char *why, char **out,
    size_t *outlen)
{
	size_t head = share / 2, tail_at = len - (share - share / 2);
	char marker[512], *h = NULL, *t = NULL;
	size_t hl, tl, ml;

	/* A line end in the head's last quarter, the tail's first. */
	for (size_t i = head; i > head - head / 4 && i > 0; i--)
		if (in[i - 1] == '\n') {
			head = i;
			break;
		}
	for (size_t i = tail_at; i < tail_at + (len - tail_at) / 4; i++)
		if (in[i] == '\n') {
			tail_at = i + 1;
			break;
		}
	for (int k = 0; k < 3 && head > 0 && is_cont(in[head]); k++)
		head--;
	for (int k = 0; k < 3 && tail_at < len && is_cont(in[tail_at]); k++)
		tail_at++;
	if (file != NULL && file[0] != '\0')
		ml = (size_t)snprintf(marker, sizeof(marker), "\n[kilntainers: "
		    "%s was %zu bytes; %zu bytes are left out here. All of it "
		    "is saved inside the computer at %s: read it with grep, "
		    "tail, head or sed -n.]\n", name, len, tail_at - head, file);
	else
		ml = (size_t)snprintf(marker, sizeof(marker), "\n[kilntainers: "
		    "%s was %zu bytes; %zu bytes are left out here. It could "
		    "not be saved in the computer (%s): re-run with its output "
		    "redirected to a file.]\n", name, len, tail_at - head,
		    why != NULL ? why : "unknown error");
	if (ml >= sizeof(marker))
		ml = sizeof(marker) - 1;
	if ((h = msc_utf8_repair((const char *)in, head, &hl)) == NULL ||
	    (t = msc_utf8_repair((const char *)in + tail_at, len - tail_at,
		 &tl)) == NULL ||
	    (*out = malloc(hl + ml + tl + 1)) == NULL) {
		free(h);
		free(t);
		return -ENOMEM;
	}
	memcpy(*out, h, hl);
	memcpy(*out + hl, marker, ml);
	memcpy(*out + hl + ml, t, tl);
	(*out)[hl + ml + tl] = '\0';
	*outlen = hl + ml + tl;
	free(h);
	free(t);
	return 0;
}

static void
fill(ProtobufCBinaryData *dst, const ProtobufCBinaryData *src)
{
	size_t len;

	dst->data = (uint8_t *)msc_utf8_repair((const char *)src->data,
	    src->len, &len);
	dst->len = dst->data != NULL ? len : 0;
}

/* Builds the reply's streams and hands it over; frees o. */
static void
finish(struct out_save *o)
{
	Msc__V1__TerminalExecReply *rep = o->rep;

	for (int i = 0; i < 2; i++) {
		ProtobufCBinaryData *dst = i == 0 ? &rep->stdout : &rep->stderr;
		const ProtobufCBinaryData *src = stream(o, i);
		char *text;
		size_t n;

		if (!o->cut[i]) {
			fill(dst, src);
			continue;
		}
		if (sess_output_cut(src->data, src->len, o->share[i],
		    stream_name[i], o->path[i], o->why[i], &text, &n) != 0) {
			dst->data = NULL;
			continue;
		}
		dst->data = (uint8_t *)text;
		dst->len = n;
		if (i == 0) {
			rep->stdout_bytes = src->len;
			rep->stdout_file = o->path[0];
		} else {
			rep->stderr_bytes = src->len;
			rep->stderr_file = o->path[1];
		}
	}
	/* done replies (rep's file names point into o until it returns). */
	o->done(o->arg, rep);
	protobuf_c_message_free_unpacked(&o->res->base, NULL);
	free(o);
}

static void save_next(struct out_save *o);

static void
saved(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct out_save *o = arg;
	Msc__V1__ExecResult *r = (Msc__V1__ExecResult *)resp;
	int i = o->next;

	if (r == NULL)
		snprintf(o->why[i], OUT_WHY_MAX, "%.180s", sess_agent_text(st,
		    MSC_REASON_STEP_EXEC, o->to.owner));
	else if (r->outcome != MSC__V1__EXEC_OUTCOME__EXITED ||
	    r->exit_code != 0)
		snprintf(o->why[i], OUT_WHY_MAX, "writing it failed: %.*s",
		    (int)(r->stderr.len > 120 ? 120 : r->stderr.len),
		    r->stderr.len ? (const char *)r->stderr.data : "no message");
	if (o->why[i][0] != '\0')
		o->path[i][0] = '\0';
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	o->next++;
	save_next(o);
}

static void
save_next(struct out_save *o)
{
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;
	char *args[] = { "sh", "-c", (char *)save_sh, "kilntainers-save", NULL };
	const ProtobufCBinaryData *src;
	char stamp[32], rnd[9];
	struct tm tm;
	time_t now = time(NULL);
	int i;

	while (o->next < 2 && !o->cut[o->next])
		o->next++;
	if ((i = o->next) >= 2) {
		finish(o);
		return;
	}
	src = stream(o, i);
	if (src->len > OUT_SAVE_MAX) {
		snprintf(o->why[i], OUT_WHY_MAX, "it is over %u MiB",
		    OUT_SAVE_MAX >> 20);
		o->next++;
		save_next(o);
		return;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	msc_random_hex(rnd, 4);
	snprintf(o->path[i], OUT_PATH_MAX, OUT_DIR "/%s-%s.%s", stamp, rnd,
	    stream_name[i]);
	args[4] = o->path[i];
	er.computer_id = (char *)o->to.computer_id;
	er.n_args = 5;
	er.args = args;
	er.has_stdin = src->len > 0;
	er.stdin = *src;
	er.timeout_s = OUT_SAVE_MS / 1000;
	er.output_limit = 65536;
	er.owner = (char *)o->to.owner;
	if (msc_client_call(o->to.driver, &msc__v1__driver__descriptor, "Exec",
		&er.base, sess_hop_ms(sess_left_ms(o->to.deadline_ms),
		    OUT_SAVE_MS + SESS_REPLY_MARGIN_MS), saved, o) != 0) {
		struct msc_status st = { MSC__V1__CODE__UNAVAILABLE,
			"the computer's driver cannot be reached",
			MSC__V1__REASON__REASON_NOT_SENT };

		saved(o, &st, NULL);
	}
}

void
sess_output_reply(struct sess_service *s, const struct sess_output_to *to,
    Msc__V1__ExecResult *res, Msc__V1__TerminalExecReply *rep,
    sess_output_done done, void *arg)
{
	size_t bound = (size_t)s->cfg->reply_output_limit;
	size_t len[2] = { res->stdout.len, res->stderr.len };
	struct out_save *o = calloc(1, sizeof(*o));

	if (o == NULL) {
		protobuf_c_message_free_unpacked(&res->base, NULL);
		rep->stdout.data = rep->stderr.data = NULL;
		done(arg, rep);
		return;
	}
	o->s = s;
	o->to = *to;
	o->res = res;
	o->rep = rep;
	o->done = done;
	o->arg = arg;
	if (bound > 0 && len[0] + len[1] > bound) {
		/* Each stream half the bound; what one leaves, the other. */
		for (int i = 0; i < 2; i++)
			o->share[i] = len[i] < bound / 2 ? len[i] : bound / 2;
		for (int i = 0; i < 2; i++)
			if (len[i] > o->share[i])
				o->share[i] = bound - o->share[1 - i];
		for (int i = 0; i < 2; i++)
			o->cut[i] = len[i] > o->share[i];
	}
	save_next(o);
}
