/* SPDX-License-Identifier: BSD-2-Clause */
/* fx_urcu_qsbr.c - liburcu's urcu-qsbr flavour for bench_srcu (see fx_urcu.h). */
#define _LGPL_SOURCE 1
#include <urcu/urcu-qsbr.h>

#define URCU_FLAV qsbr
#define URCU_FLAV_QSBR 1
#define URCU_NAME "urcu_qsbr"
#include "fx_urcu.h"
