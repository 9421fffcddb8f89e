/*
 * msc_log.h - one stderr line per event: "<prog>[pid] <level>: message".
 * stdout is the MCP channel, so nothing here ever writes to it.
 * The level comes from $MSC_LOG_LEVEL (error, warn, info, debug; default
 * info). Thread-safe: each line is one write(2). The process's secrets
 * are replaced in each line (msc_redact.h).
 */
#ifndef MSC_LOG_H
#define MSC_LOG_H

enum msc_log_level {
	MSC_LOG_ERR = 0,
	MSC_LOG_WARN,
	MSC_LOG_INFO,
	MSC_LOG_DEBUG,
};

/* Sets the program name shown on each line (borrowed; keep it alive). */
void msc_log_init(const char *prog);
int msc_log_enabled(enum msc_log_level level);
void msc_log(enum msc_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define msc_log_err(...) msc_log(MSC_LOG_ERR, __VA_ARGS__)
#define msc_log_warn(...) msc_log(MSC_LOG_WARN, __VA_ARGS__)
#define msc_log_info(...) msc_log(MSC_LOG_INFO, __VA_ARGS__)
#define msc_log_debug(...)                                                    \
	do {                                                                  \
		if (msc_log_enabled(MSC_LOG_DEBUG))                           \
			msc_log(MSC_LOG_DEBUG, __VA_ARGS__);                  \
	} while (0)

#endif /* MSC_LOG_H */
