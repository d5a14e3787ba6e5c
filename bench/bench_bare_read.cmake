# SPDX-License-Identifier: BSD-2-Clause
# bench_bare_read: the read-side pair of ksync SRCU and of liburcu-memb in a
# bare C loop (plain C, no Google Benchmark); left out without liburcu-memb.
if(KSYNC_HAVE_URCU)
  ksync_add_executable(bench_bare_read SOURCES ${CMAKE_CURRENT_LIST_DIR}/bare_read.c
                       LIBS PkgConfig::URCU)
  if(KSYNC_BUILD_TESTS)
    ksync_add_command_test(bare_read_bench_smoke
      COMMAND bench_bare_read --pairs=0.1 --reps=1 --json TIMEOUT 60)
  endif()
endif()
