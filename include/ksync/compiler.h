/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/compiler.h - compiler helpers every other ksync header builds on
 *
 * Access-once helpers, branch hints, container_of, compile-time assertions and
 * the WARN_ON family. Canonical names carry the ksync_ / KSYNC_ prefix;
 * <ksync/kernel.h> adds the kernel spellings.
 *
 * KSYNC_READ_ONCE()/KSYNC_WRITE_ONCE() are part of the atomics layer: with
 * KSYNC_ATOMIC_BUILTINS defined they become relaxed __atomic loads and stores,
 * which ThreadSanitizer understands; otherwise they are volatile accesses, as in
 * the kernel (and as Concurrency Kit's ck_pr_md_load_* are on x86-64).
 *
 * Debug switch: define KSYNC_DEBUG before including any
 * ksync header, or build with -DKSYNC_DEBUG, to enable the extra checks that
 * the other headers document (exact srcu_read_lock_held(), list traversal
 * conditions, ...). KSYNC_DEBUG_ENABLED is 1 or 0 accordingly.
 */
#ifndef KSYNC_COMPILER_H
#define KSYNC_COMPILER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#if !defined(__GNUC__)
#error "ksync needs GNU C extensions (gcc or clang)"
#endif

#if defined(KSYNC_DEBUG)
#define KSYNC_DEBUG_ENABLED 1
#else
#define KSYNC_DEBUG_ENABLED 0
#endif

#ifdef __cplusplus
#define KSYNC_EXTERN_C_BEGIN extern "C" {
#define KSYNC_EXTERN_C_END }
#else
#define KSYNC_EXTERN_C_BEGIN
#define KSYNC_EXTERN_C_END
#endif

KSYNC_EXTERN_C_BEGIN

/** ksync_barrier() - compiler barrier: no memory access moves across it. */
#define ksync_barrier() __asm__ __volatile__("" ::: "memory")

#define ksync_likely(x) __builtin_expect(!!(x), 1)
#define ksync_unlikely(x) __builtin_expect(!!(x), 0)

#define KSYNC_ALWAYS_INLINE inline __attribute__((__always_inline__))
#define KSYNC_NOINLINE __attribute__((__noinline__))
#define KSYNC_UNUSED __attribute__((__unused__))
#define KSYNC_COLD __attribute__((__cold__))
#define KSYNC_WEAK __attribute__((__weak__))
/*
 * A process-wide object defined in a header: weak, so every translation unit's
 * copy folds into one, and of default visibility, so that a shared library
 * built with -fvisibility=hidden folds into the same object as the program.
 */
#define KSYNC_PROCESS_WIDE __attribute__((__weak__, __visibility__("default")))
/* Size of a cache line; fields written by different sides are kept this far apart. */
#define KSYNC_CACHELINE_SIZE 64
#define KSYNC_CACHELINE_ALIGNED __attribute__((__aligned__(KSYNC_CACHELINE_SIZE)))

#define KSYNC_STRINGIFY_(x) #x
#define KSYNC_STRINGIFY(x) KSYNC_STRINGIFY_(x)
#define KSYNC_CONCAT_(a, b) a##b
#define KSYNC_CONCAT(a, b) KSYNC_CONCAT_(a, b)
/* A name unique to the line, for macro-local variables. */
#define KSYNC_UNIQUE(prefix) KSYNC_CONCAT(prefix, __LINE__)

/**
 * KSYNC_READ_ONCE() - load @x exactly once, untorn, without ordering.
 * @x: an lvalue of scalar type (1, 2, 4 or 8 bytes)
 *
 * The compiler may neither fuse, repeat nor invent this load. It orders nothing
 * against other locations; pair it with the barriers of <ksync/atomic.h>.
 */
/**
 * KSYNC_WRITE_ONCE() - store @v to @x exactly once, untorn, without ordering.
 */
#ifdef KSYNC_ATOMIC_BUILTINS
#define KSYNC_READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define KSYNC_WRITE_ONCE(x, v)                                                 \
	do {                                                                   \
		__typeof__(x) ksync__wo_v = (v);                               \
		__atomic_store_n(&(x), ksync__wo_v, __ATOMIC_RELAXED);          \
	} while (0)
#else
#define KSYNC_READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define KSYNC_WRITE_ONCE(x, v)                                                 \
	do {                                                                   \
		*(volatile __typeof__(x) *)&(x) = (v);                         \
	} while (0)
#endif

/**
 * ksync_container_of() - the structure that embeds @ptr as its @member.
 * @ptr: pointer to the member
 * @type: type of the containing structure
 * @member: name of the member within @type
 */
#define ksync_container_of(ptr, type, member)                                  \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/**
 * KSYNC_BUILD_BUG_ON() - fail the build when @cond, a constant expression, is true.
 */
#define KSYNC_BUILD_BUG_ON(cond)                                               \
	((void)sizeof(struct { int ksync__bbo : (cond) ? -1 : 1; }))
#ifdef __cplusplus
#undef KSYNC_BUILD_BUG_ON
#define KSYNC_BUILD_BUG_ON(cond) static_assert(!(cond), "KSYNC_BUILD_BUG_ON(" #cond ")")
#endif

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

#endif /* KSYNC_COMPILER_H */
