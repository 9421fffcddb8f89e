/*
 * session_deadline.c - the session's bounds and each hop's share of them.
 */
#include "session_deadline.h"

#include <limits.h>

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
