/* SPDX-License-Identifier: BSD-2-Clause */
/* fx_urcu_bp.c - liburcu's urcu-bp flavour for bench_srcu (see fx_urcu.h). */
#define _LGPL_SOURCE 1
#include <urcu/urcu-bp.h>

#define URCU_FLAV bp
#define URCU_FLAV_BP 1
#define URCU_NAME "urcu_bp"
#include "fx_urcu.h"
