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

/**
 * KSYNC_BUILD_BUG_ON() - fail the build when @cond, a constant expression, is true.
 */
#define KSYNC_BUILD_BUG_ON(cond)                                               \
	((void)sizeof(struct { int ksync__bbo : (cond) ? -1 : 1; }))
#ifdef __cplusplus
#undef KSYNC_BUILD_BUG_ON
#define KSYNC_BUILD_BUG_ON(cond) static_assert(!(cond), "KSYNC_BUILD_BUG_ON(" #cond ")")
#endif

KSYNC_EXTERN_C_END

#endif /* KSYNC_COMPILER_H */
