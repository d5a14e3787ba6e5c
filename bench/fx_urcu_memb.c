/* SPDX-License-Identifier: BSD-2-Clause */
/* fx_urcu_memb.c - liburcu's urcu-memb flavour for bench_srcu (see fx_urcu.h). */
#define _LGPL_SOURCE 1
#include <urcu/urcu-memb.h>

#define URCU_FLAV memb
#define URCU_FLAV_MEMB 1
#define URCU_NAME "urcu_memb"
#include "fx_urcu.h"
