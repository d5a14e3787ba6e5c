/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/compiler.h - compiler helpers every other ksync header builds on
 *
 * Access-once helpers, branch hints, container_of and compile-time
 * assertions. The reporting of misuse (the WARN_ON family) is in
 * <ksync/bug.h>, as the kernel keeps <linux/bug.h> apart. Canonical names
 * carry the ksync_ / KSYNC_ prefix; <ksync/kernel.h> adds the kernel
 * spellings.
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

#include <stddef.h>

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

/*
 * Whether the compiler reports a call to a function declared
 * __attribute__((__error__(msg))) that survives optimisation (gcc; clang 14
 * and later).
 */
#if defined(__has_attribute)
#if __has_attribute(__error__)
#define KSYNC__HAVE_ERROR_ATTRIBUTE 1
#endif
#endif

#define KSYNC__PASTE2(a, b) a##b
#define KSYNC__PASTE(a, b) KSYNC__PASTE2(a, b)

/**
 * KSYNC_COMPILETIME_ASSERT() - fail the build with @msg unless @cond holds.
 * @cond: an expression whose value the compiler knows, at the latest after
 *	  optimisation (the kernel's compiletime_assert())
 * @msg: a string literal, the diagnostic
 *
 * A call to a function declared with the error attribute, in a branch taken
 * when @cond is false: the compiler removes the branch when it proves @cond
 * true, and reports the call otherwise. So, as the kernel's, it accepts a
 * constant expression at every optimisation level, and an expression that is
 * constant only after optimisation (a local variable's known value, an inline
 * function's constant argument, __builtin_constant_p() of either) when the
 * translation unit is optimised (-O1 and above); at -O0 those fail. A
 * statement, in C and C++. A compiler without the attribute fails at link time
 * instead (an undefined reference to ksync__compiletime_assert_N).
 */
#ifdef KSYNC__HAVE_ERROR_ATTRIBUTE
#define KSYNC__COMPILETIME_ERROR(msg) __attribute__((__error__(msg)))
#else
#define KSYNC__COMPILETIME_ERROR(msg)
#endif
#define KSYNC__COMPILETIME_ASSERT(cond, msg, name)                             \
	do {                                                                   \
		extern void name(void) KSYNC__COMPILETIME_ERROR(msg);         \
		if (!(cond))                                                   \
			name();                                                \
	} while (0)
#define KSYNC_COMPILETIME_ASSERT(cond, msg)                                    \
	KSYNC__COMPILETIME_ASSERT(cond, msg, KSYNC__PASTE(ksync__compiletime_assert_, __COUNTER__))

/**
 * KSYNC_BUILD_BUG_ON_MSG() - fail the build with @msg when @cond is true.
 * @cond: as for KSYNC_COMPILETIME_ASSERT()
 * @msg: a string literal
 */
#define KSYNC_BUILD_BUG_ON_MSG(cond, msg) KSYNC_COMPILETIME_ASSERT(!(cond), msg)

/**
 * KSYNC_BUILD_BUG_ON() - fail the build when @cond is true.
 * @cond: a constant expression, or (in an optimised build) an expression the
 *	  compiler finds constant after optimisation, as the kernel's
 *	  BUILD_BUG_ON() accepts; see KSYNC_COMPILETIME_ASSERT()
 *
 * A statement. For a check at file scope use static_assert().
 */
#define KSYNC_BUILD_BUG_ON(cond) KSYNC_BUILD_BUG_ON_MSG(cond, "BUILD_BUG_ON failed: " #cond)

KSYNC_EXTERN_C_END

#endif /* KSYNC_COMPILER_H */
