/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/seams.c - the sources' test seam: the trigger hook of
 * <ksync/pressure_testing.h>, read by ksync__psrc_write_trigger() (paths.c).
 * A file of its own that calls nothing, as lib/shrinker/seams.c, so that no
 * file calls back into one that calls it. A production build
 * (-DKSYNC_SEAMS=OFF) has no hook: triggers go to write() directly.
 */
#include "sources.h"

#include <ksync/compiler.h>
#include <ksync/impl/seams.h>

#if KSYNC_SEAMS
ksync_pressure_write_fn ksync__pressure_write_hook;
void *ksync__pressure_write_arg;

/**
 * ksync_pressure_set_write_hook() - install the trigger hook (NULL removes it).
 * The argument is stored before the hook (H1), so a writer that loads the
 * hook with acquire (H2, paths.c) sees its argument.
 */
void ksync_pressure_set_write_hook(ksync_pressure_write_fn fn, void *arg)
{
	__atomic_store_n(&ksync__pressure_write_arg, arg, __ATOMIC_RELAXED);
	/* H1: orders the argument before the hook; pairs with H2 in ksync__psrc_write_trigger(). */
	__atomic_store_n(&ksync__pressure_write_hook, fn, __ATOMIC_RELEASE);
}
#endif
