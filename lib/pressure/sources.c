/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/pressure/sources.c - the table of sources, by kind (lib/pressure/internal.h). */
#include "internal.h"

const struct ksync__psrc_ops *const ksync__psrc_table[KSYNC_PRESSURE_NR_SOURCES] = { 0 };
