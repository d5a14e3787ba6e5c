/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/context.c - the shrinkers this thread is calling into: set by
 * the walks (walk.c) and the debug calls around each callback, read by the
 * misuse checks of every file (in_callback(), thread_is_calling(),
 * internal.h) and by unregister's cycle check. A file of its own, which
 * calls nothing (see internal.h for the direction of calls).
 */
#define _GNU_SOURCE
#include "internal.h"

_Thread_local struct ksync_shrinker_record *ksync__shrinker_calling[CALL_DEPTH_MAX] SHRINKER_TLS;
_Thread_local int ksync__shrinker_depth SHRINKER_TLS;
