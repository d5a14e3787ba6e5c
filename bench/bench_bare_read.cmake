# SPDX-License-Identifier: BSD-2-Clause
# bench_bare_read: the read-side pair of ksync SRCU and of liburcu-memb in a
# bare C loop (plain C, no Google Benchmark); left out without liburcu-memb.
if(KSYNC_HAVE_URCU)
  ksync_add_executable(bench_bare_read SOURCES ${CMAKE_CURRENT_LIST_DIR}/bare_read.c
                       LIBS PkgConfig::URCU)
  # Loops at 64-byte boundaries: a tight loop's cost depends on its placement
  # (the same urcu-memb loop measured 1.0 or 1.5 ns a pair in two builds).
  include(CheckCCompilerFlag)
  check_c_compiler_flag(-falign-loops=64 KSYNC_CC_ALIGN_LOOPS)
  if(KSYNC_CC_ALIGN_LOOPS)
    target_compile_options(bench_bare_read PRIVATE -falign-loops=64 -falign-functions=64)
  endif()
  if(KSYNC_BUILD_TESTS)
    ksync_add_command_test(bare_read_bench_smoke
      COMMAND bench_bare_read --pairs=0.1 --reps=1 --json TIMEOUT 60)
    ksync_add_command_test(bare_read_bench_smoke_best
      COMMAND bench_bare_read --pairs=0.1 --reps=1 --stat=best --json TIMEOUT 60)
  endif()
endif()
