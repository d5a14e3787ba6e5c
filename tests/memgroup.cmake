# SPDX-License-Identifier: BSD-2-Clause
# Tests of ksync::memgroup (lib/memgroup): lifecycle, clients, references.
ksync_add_test(memgroup_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/memgroup_test.c
               LIBS ksync::memgroup LABELS quick concurrent TIMEOUT 120)
