/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/sources.c - the table of sources, by kind (lib/pressure/internal.h).
 *
 * The monitor opens a source through ksync__psrc_table[kind]; the test
 * source (%KSYNC_PRESSURE_SRC_TEST) is the monitor's own, so its slot is
 * NULL. Each ops structure lives with its source: psi.c (both PSI kinds),
 * systemd.c, vmpressure.c, limit.c (the three polled kinds).
 */
#include "sources.h"

const struct ksync__psrc_ops *const ksync__psrc_table[KSYNC_PRESSURE_NR_SOURCES] = {
	[KSYNC_PRESSURE_SRC_SYSTEMD] = &ksync__psrc_systemd_ops,
	[KSYNC_PRESSURE_SRC_PSI_CGROUP] = &ksync__psrc_psi_cgroup_ops,
	[KSYNC_PRESSURE_SRC_PSI_SYSTEM] = &ksync__psrc_psi_system_ops,
	[KSYNC_PRESSURE_SRC_VMPRESSURE] = &ksync__psrc_vmpressure_ops,
	[KSYNC_PRESSURE_SRC_LIMIT] = &ksync__psrc_limit_ops,
	[KSYNC_PRESSURE_SRC_MEMINFO] = &ksync__psrc_meminfo_ops,
	[KSYNC_PRESSURE_SRC_BUDGET] = &ksync__psrc_budget_ops,
	[KSYNC_PRESSURE_SRC_TEST] = NULL,
};
