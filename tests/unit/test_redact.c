/*
 * test_redact.c - secrets kept out of what a process writes: msc_redact
 * on its own (every occurrence, secrets longer and shorter than the mark,
 * a buffer too small for the marks, the limits) and through msc_log,
 * whose line on stderr must not carry the secret.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_log.h"
#include "msc_redact.h"

/* Each occurrence of each kept secret becomes the mark; others stay. */
static void
every_occurrence(void **state)
{
	char buf[128] = "key=tok-123456 again tok-123456, id=ab, x=verylongsecretvalue!";
	size_t n;

	(void)state;
	assert_int_equal(msc_redact_add("tok-123456"), 0);
	assert_int_equal(msc_redact_add("tok-123456"), 0);     /* kept once */
	assert_int_equal(msc_redact_add("verylongsecretvalue"), 0);
	assert_int_equal(msc_redact_add("ab"), -EINVAL);       /* too short */
	assert_int_equal(msc_redact_add(NULL), -EINVAL);
	n = msc_redact(buf, sizeof(buf), false);
	assert_int_equal(n, strlen(buf));
	assert_string_equal(buf, "key=[redacted] again [redacted], id=ab, "
				 "x=[redacted]!");
}

/*
 * A secret shorter than the mark grows the text: it is cut at cap, and
 * never so that the first bytes of a secret end it.
 */
static void
cut_at_capacity(void **state)
{
	char buf[16];

	(void)state;
	assert_int_equal(msc_redact_add("wxyz"), 0);
	snprintf(buf, sizeof(buf), "a wxyz wxyz wx");
	assert_int_equal(msc_redact(buf, sizeof(buf), false), 13);
	assert_string_equal(buf, "a [redacted] ");
	snprintf(buf, sizeof(buf), "0123456789 wxyz");
	assert_int_equal(msc_redact(buf, sizeof(buf), false), 15);
	assert_string_equal(buf, "0123456789 [red");
	assert_null(strstr(buf, "wxyz"));
}

/* A text already cut (a vsnprintf out of room) loses a secret's start. */
static void
already_cut(void **state)
{
	char buf[32] = "token is sk-live-01";

	(void)state;
	assert_int_equal(msc_redact_add("sk-live-0123456789abcdef"), 0);
	assert_int_equal(msc_redact(buf, sizeof(buf), true), 9);
	assert_string_equal(buf, "token is ");
}

/* Nothing to do on text without secrets, an empty or NULL buffer. */
static void
plain_text_unchanged(void **state)
{
	char buf[32] = "nothing secret here";
	char empty[1] = "";

	(void)state;
	assert_int_equal(msc_redact(buf, sizeof(buf), false), 19);
	assert_string_equal(buf, "nothing secret here");
	assert_int_equal(msc_redact(empty, sizeof(empty), false), 0);
	assert_int_equal(msc_redact(NULL, 8, false), 0);
}

/* A log line carrying a kept secret reaches stderr without it. */
static void
log_line_redacted(void **state)
{
	int fds[2], saved;
	char got[512];
	ssize_t n;

	(void)state;
	assert_int_equal(msc_redact_add("sk-live-0123456789abcdef"), 0);
	assert_int_equal(pipe(fds), 0);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fds[1], STDERR_FILENO), STDERR_FILENO);
	msc_log_warn("provider said: Authorization: Bearer %s (retry)",
	    "sk-live-0123456789abcdef");
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(fds[1]);
	n = read(fds[0], got, sizeof(got) - 1);
	close(fds[0]);
	assert_true(n > 0);
	got[n] = '\0';
	assert_null(strstr(got, "sk-live"));
	assert_non_null(strstr(got, "Bearer [redacted] (retry)\n"));
}

/* At most MSC_REDACT_MAX secrets are kept; the rest is -ENOSPC. */
static void
bounded(void **state)
{
	char s[32];
	int rv = 0;

	(void)state;
	for (int i = 0; i < MSC_REDACT_MAX + 1 && rv == 0; i++) {
		snprintf(s, sizeof(s), "secret-%04d", i);
		rv = msc_redact_add(s);
	}
	assert_int_equal(rv, -ENOSPC);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_occurrence),
		cmocka_unit_test(cut_at_capacity),
		cmocka_unit_test(already_cut),
		cmocka_unit_test(plain_text_unchanged),
		cmocka_unit_test(log_line_redacted),
		cmocka_unit_test(bounded),
	};

	msc_log_init("test-redact");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
