/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/direct.c - direct reclaim: the allocating thread makes room
 * (ksync_pressure_charge(), include/ksync/pressure.h).
 *
 * First step: the entry point only (it counts nothing yet); the reclaim
 * comes in the next commits.
 */
#include "monitor.h"

#include "../common/report.h"

#include <errno.h>

int ksync__pressure_charge(KSYNC_SITE_ARGS, struct ksync_pressure *p, size_t bytes)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	(void)bytes;
	if (MISUSE(at, !p, "ksync_pressure_charge: NULL monitor"))
		return -EINVAL;
	return 0;
}
