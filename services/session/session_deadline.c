/*
 * session_deadline.c - the session's bounds and each hop's share of them.
 */
#include "session_deadline.h"

#include <limits.h>

#include "msc_time.h"

int
sess_exec_budget_ms(long timeout_s)
{
	long long ms;

	if (timeout_s < 0)
		timeout_s = 0;
	if (timeout_s > INT_MAX / 1000)
		return INT_MAX;
	ms = (long long)timeout_s * 1000 + SESS_STEP_MS + SESS_EXEC_SLACK_MS;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

int
sess_hop_ms(int remaining_ms, int step_ms)
{
	int left = remaining_ms - SESS_REPLY_MARGIN_MS;

	if (left < 1)
		left = 1;
	if (step_ms > 0 && step_ms < left)
		return step_ms;
	return left;
}

int
sess_left_ms(uint64_t deadline_ms)
{
	uint64_t now = msc_now_ms();

	if (deadline_ms <= now)
		return 0;
	return deadline_ms - now > INT_MAX ? INT_MAX : (int)(deadline_ms - now);
}
