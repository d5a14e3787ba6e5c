# SPDX-License-Identifier: BSD-2-Clause
# Tests of issue 4: bitops, bitmaps and sized maps, RCU lists, generation counters.
# Each binary mixes quick model tests with short multi-threaded ones, so each
# is labelled both quick (every build) and concurrent (also under TSan).
ksync_add_test(bitops_test SOURCES bitops_test.c LABELS quick concurrent TIMEOUT 120)
