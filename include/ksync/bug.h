/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/bug.h - how ksync reports misuse: the WARN_ON family
 *
 * Every report names a file and a line, goes to stderr, is counted in
 * ksync_warn_count and reaches ksync_warn_hook. KSYNC_WARN_ONCE() and
 * KSYNC_WARN_ON_ONCE() report once per call site of the macro; KSYNC_WARN_AT()
 * reports once per (file, line) it is given, which the compiled modules
 * pass from their callers (docs/errors.md). Apart from <ksync/compiler.h>
 * (as the kernel keeps <linux/bug.h>): it brings <stdio.h> and <stdarg.h>,
 * which a header that never reports need not pay for.
 */
#ifndef KSYNC_BUG_H
#define KSYNC_BUG_H

#include <ksync/compiler.h>

#include <stdarg.h>
#include <stdio.h>

KSYNC_EXTERN_C_BEGIN

/*
 * Warnings. Every report goes through ksync_warn_report(): it prints
 * "ksync: WARNING: <file>:<line>: <what>" to stderr and counts the report in
 * ksync_warn_count (tests read it to prove that misuse was reported). A
 * program may install ksync_warn_hook to see reports too (a test harness, a
 * logger); it runs after the message is printed.
 *
 * Both objects are weak definitions of default visibility (KSYNC_PROCESS_WIDE),
 * so the header-only library needs no .c file and every translation unit, in
 * the program or in a shared library, shares one counter and one hook.
 */
KSYNC_PROCESS_WIDE unsigned long ksync_warn_count;
KSYNC_PROCESS_WIDE void (*ksync_warn_hook)(const char *file, int line, const char *what);

static inline KSYNC_COLD KSYNC_UNUSED void
ksync_warn_report(const char *file, int line, const char *what)
{
	/* Diagnostics only: a relaxed builtin in every build, never a synchronisation. */
	__atomic_fetch_add(&ksync_warn_count, 1UL, __ATOMIC_RELAXED);
	fprintf(stderr, "ksync: WARNING: %s:%d: %s\n", file, line, what);
	fflush(stderr);
	void (*hook)(const char *, int, const char *) =
		__atomic_load_n(&ksync_warn_hook, __ATOMIC_ACQUIRE);
	if (hook)
		hook(file, line, what);
}

/* Formats a report (printf-style) and hands it to ksync_warn_report(). */
static inline KSYNC_COLD KSYNC_UNUSED __attribute__((__format__(__printf__, 3, 4))) void
ksync_warn_reportf(const char *file, int line, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ksync_warn_report(file, line, what);
}

/* Returns 1 the first time a call site claims its flag, 0 afterwards. */
static inline KSYNC_UNUSED int ksync_warn_claim_once(int *flag)
{
	return __atomic_load_n(flag, __ATOMIC_RELAXED) == 0 &&
	       __atomic_exchange_n(flag, 1, __ATOMIC_RELAXED) == 0;
}

/**
 * KSYNC_WARN() - report a printf-style message with file and line when @cond
 * holds (the kernel's WARN(cond, fmt, ...)).
 * @cond: the condition
 * @...: the format and its arguments
 * Return: !!@cond, so it can be used as `if (KSYNC_WARN(bad, "..."))`.
 */
#define KSYNC_WARN(cond, ...)                                                  \
	__extension__({                                                        \
		int ksync__w_c = !!(cond);                                     \
		if (ksync_unlikely(ksync__w_c))                                \
			ksync_warn_reportf(__FILE__, __LINE__, __VA_ARGS__);   \
		ksync__w_c;                                                    \
	})

/**
 * KSYNC_WARN_ONCE() - as KSYNC_WARN(), but only the first hit of each call site
 * prints; the value of @cond is returned every time.
 */
#define KSYNC_WARN_ONCE(cond, ...)                                             \
	__extension__({                                                        \
		static int ksync__wo_flag;                                     \
		int ksync__wo_c = !!(cond);                                    \
		if (ksync_unlikely(ksync__wo_c) &&                             \
		    ksync_warn_claim_once(&ksync__wo_flag))                    \
			ksync_warn_reportf(__FILE__, __LINE__, __VA_ARGS__);   \
		ksync__wo_c;                                                   \
	})

/**
 * KSYNC_BUG() - report "BUG" with file and line, then abort() (the kernel's BUG()).
 */
#define KSYNC_BUG()                                                            \
	do {                                                                   \
		ksync_warn_report(__FILE__, __LINE__, "BUG");                  \
		__builtin_abort();                                             \
	} while (0)

/**
 * KSYNC_BUG_ON() - KSYNC_BUG() when @cond holds (the kernel's BUG_ON()).
 */
#define KSYNC_BUG_ON(cond)                                                     \
	do {                                                                   \
		if (ksync_unlikely(!!(cond))) {                                \
			ksync_warn_report(__FILE__, __LINE__, "BUG_ON(" #cond ")"); \
			__builtin_abort();                                     \
		}                                                              \
	} while (0)

/*
 * Reports on behalf of a caller. ksync's compiled calls (the shrinker
 * registry, memory groups) are macros that pass the caller's __FILE__ and
 * __LINE__, so that misuse is reported naming the caller's line, once per
 * call site, however often that site misuses the call. The sites already
 * reported are kept in a small process-wide table (exact file pointer and
 * line); should it fill up, later sites are reported every time.
 */
#define KSYNC__REPORTED_SITES 512
struct ksync__reported_site {
	const char *file;
	int line;
};
KSYNC_PROCESS_WIDE struct ksync__reported_site ksync__reported_sites[KSYNC__REPORTED_SITES];
KSYNC_PROCESS_WIDE int ksync__reported_lock;

/* First report from @file:@line? (Cold path: a spinlock and a linear probe.) */
static inline KSYNC_COLD KSYNC_UNUSED int ksync__site_first_report(const char *file, int line)
{
	unsigned long h = ((unsigned long)(size_t)file >> 4) * 31UL + (unsigned long)line;
	int first = 1;

	while (__atomic_exchange_n(&ksync__reported_lock, 1, __ATOMIC_ACQUIRE))
		;
	for (unsigned i = 0; i < KSYNC__REPORTED_SITES; i++) {
		struct ksync__reported_site *e =
			&ksync__reported_sites[(h + i) % KSYNC__REPORTED_SITES];
		if (!e->file) {
			e->file = file;
			e->line = line;
			break;
		}
		if (e->file == file && e->line == line) {
			first = 0;
			break;
		}
	}
	__atomic_store_n(&ksync__reported_lock, 0, __ATOMIC_RELEASE);
	return first;
}

/**
 * KSYNC_WARN_AT() - report @what naming @file:@line when @cond holds, once
 * per (@file, @line).
 * Return: !!@cond, every time.
 */
#define KSYNC_WARN_AT(file, line, cond, ...)                                   \
	__extension__({                                                        \
		int ksync__wa_c = !!(cond);                                    \
		if (ksync_unlikely(ksync__wa_c) &&                             \
		    ksync__site_first_report((file), (line)))                  \
			ksync_warn_reportf((file), (line), __VA_ARGS__);       \
		ksync__wa_c;                                                   \
	})

/**
 * KSYNC_WARN_ON() - report "WARN_ON(<cond>)" with file and line when @cond holds.
 * Return: !!@cond.
 */
#define KSYNC_WARN_ON(cond) KSYNC_WARN(cond, "WARN_ON(" #cond ")")

/**
 * KSYNC_WARN_ON_ONCE() - as KSYNC_WARN_ON(), printing once per call site.
 * Return: !!@cond on every call.
 */
#define KSYNC_WARN_ON_ONCE(cond) KSYNC_WARN_ONCE(cond, "WARN_ON_ONCE(" #cond ")")

/*
 * Debug-only assertion: a KSYNC_WARN_ON_ONCE in KSYNC_DEBUG builds, nothing
 * (not even the evaluation of @cond) otherwise.
 */
#if KSYNC_DEBUG_ENABLED
#define KSYNC_DEBUG_WARN_ON_ONCE(cond) KSYNC_WARN_ON_ONCE(cond)
#else
/* A statement expression: usable as a bare statement without -Wunused-value. */
#define KSYNC_DEBUG_WARN_ON_ONCE(cond) __extension__({ (void)sizeof(!!(cond)); 0; })
#endif

KSYNC_EXTERN_C_END

#endif /* KSYNC_BUG_H */
