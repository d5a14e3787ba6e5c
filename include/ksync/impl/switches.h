/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/switches.h - the process-wide switches of <ksync/fuzzing.h>
 * (the fuzzing mode, allocation-failure injection) and the allocation
 * wrapper that every allocation site of ksync calls. Private: no pthread,
 * no stdio, so that a header that allocates (bitmap.h) pays for nothing
 * else. Programs use <ksync/fuzzing.h>.
 */
#ifndef KSYNC_IMPL_SWITCHES_H
#define KSYNC_IMPL_SWITCHES_H

#include <ksync/compiler.h>

#include <stdbool.h>
#include <stddef.h>

KSYNC_EXTERN_C_BEGIN

/* The switches (process-wide; see above). Use the functions below. */
KSYNC_PROCESS_WIDE int ksync_fuzzing_mode;
KSYNC_PROCESS_WIDE unsigned long ksync__fault_countdown;
KSYNC_PROCESS_WIDE unsigned long ksync__fault_fired;

#if defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) && !defined(KSYNC_NO_FUZZING_MODE)
/* Every translation unit built for fuzzing turns the mode on before main(). */
__attribute__((__constructor__)) static void ksync__fuzzing_mode_at_start(void)
{
	__atomic_store_n(&ksync_fuzzing_mode, 1, __ATOMIC_RELAXED);
}
#endif

/*
 * ksync__alloc_fails() - called by every allocation site of ksync before it
 * allocates: true when this allocation must fail. Relaxed: a counter, never a
 * synchronisation.
 */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED bool ksync__alloc_fails(void)
{
	unsigned long n = __atomic_load_n(&ksync__fault_countdown, __ATOMIC_RELAXED);

	while (ksync_unlikely(n != 0)) {
		if (__atomic_compare_exchange_n(&ksync__fault_countdown, &n, n - 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			if (n != 1)
				return false;
			__atomic_store_n(&ksync__fault_fired, 1UL, __ATOMIC_RELAXED);
			return true;
		}
	}
	return false;
}

/* KSYNC__ALLOC() - @expr, an allocation, or NULL when ksync__alloc_fails(). */
#define KSYNC__ALLOC(expr) (ksync__alloc_fails() ? NULL : (expr))

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SWITCHES_H */
