# SPDX-License-Identifier: BSD-2-Clause
# Tests of issue 4: bitops, bitmaps and sized maps, RCU lists, generation counters.
# Each binary mixes quick model tests with short multi-threaded ones, so each
# is labelled both quick (every build) and concurrent (also under TSan).
ksync_add_test(bitops_test SOURCES bitops_test.c LABELS quick concurrent TIMEOUT 120)
ksync_add_test(bitmap_test SOURCES bitmap_test.c LABELS quick concurrent TIMEOUT 120)
ksync_add_test(rculist_test SOURCES rculist_test.c LABELS quick concurrent TIMEOUT 120)
ksync_add_test(generation_test SOURCES generation_test.c LABELS quick concurrent TIMEOUT 120)
# The same sources with the KSYNC_DEBUG checks on (exact srcu_read_lock_held,
# traversal conditions).
ksync_add_test(bitmap_debug_test SOURCES bitmap_test.c LABELS quick DEFINES KSYNC_DEBUG TIMEOUT 120)
ksync_add_test(rculist_debug_test SOURCES rculist_test.c LABELS quick DEFINES KSYNC_DEBUG TIMEOUT 120)
