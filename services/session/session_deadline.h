/*
 * session_deadline.h - the session's own bounds on its calls, and each
 * downstream hop's share of a call's remaining time.
 *
 * A caller (the edge) that sets no deadline gets the session's bound for
 * the method; one that does keeps its own. Each call the session makes on
 * the call's behalf (Inventory/Acquire, Driver/Exec) gets at most its
 * step's bound and never more than the call has left, less a margin to
 * answer in: deadlines flow down from the caller, hop by hop.
 */
#ifndef SESS_SESSION_DEADLINE_H
#define SESS_SESSION_DEADLINE_H

#include <stdint.h>

/* Inventory/Acquire and the other lifecycle steps: an image pull, a
 * create. */
#define SESS_STEP_MS 660000
/* Past a command's timeout: its turn on a busy computer, the kill, the
 * reply. */
#define SESS_EXEC_SLACK_MS 600000
/* A lifecycle call past its inventory step. */
#define SESS_LIFECYCLE_MS (SESS_STEP_MS + 60000)
/* Kept back from each hop, to answer before the caller gives up. */
#define SESS_REPLY_MARGIN_MS 1000

/* The session's bound for a TerminalExec whose command may run timeout_s. */
int sess_exec_budget_ms(long timeout_s);

/*
 * The deadline of a downstream call made with `remaining_ms` left of the
 * caller's: at most `step_ms` (0: no bound of its own) and the remaining
 * time less SESS_REPLY_MARGIN_MS, and at least 1 ms.
 */
int sess_hop_ms(int remaining_ms, int step_ms);

/* Milliseconds from now (msc_now_ms) to `deadline_ms`, at least 0. */
int sess_left_ms(uint64_t deadline_ms);

#endif /* SESS_SESSION_DEADLINE_H */
