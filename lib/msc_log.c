#include "msc_log.h"

#include "msc_redact.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *log_prog = "mcp-sandbox-computer";
static int log_level = -1;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void
msc_log_init(const char *prog)
{
	log_prog = prog;
	log_level = -1;
}

int
msc_log_enabled(enum msc_log_level level)
{
	if (log_level < 0) {
		const char *env = getenv("MSC_LOG_LEVEL");
		int lvl = MSC_LOG_INFO;

		for (int i = 0; env != NULL && i <= MSC_LOG_DEBUG; i++)
			if (strcasecmp(env, level_names[i]) == 0)
				lvl = i;
		log_level = lvl;
	}
	return (int)level <= log_level;
}

void
msc_log(enum msc_log_level level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n, m;

	if (!msc_log_enabled(level))
		return;
	n = snprintf(line, sizeof(line), "%s[%d] %s: ", log_prog,
	    (int)getpid(), level_names[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)msc_redact(line, sizeof(line) - 1,
	    m < 0 || (size_t)m >= sizeof(line) - (size_t)n - 1);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
