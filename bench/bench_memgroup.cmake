# SPDX-License-Identifier: BSD-2-Clause
# bench_memgroup: ksync::memgroup micro-benchmarks: the statistics fast path
# (ksync_memgroup_stat_add, the workingset series' patch 3) against the
# always-locked update (ksync_memgroup_stat_add_always_locked, its patch 2),
# charging, offline.
if(TARGET ksync::memgroup)
  ksync_add_executable(bench_memgroup SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_memgroup.cc
                       LIBS ksync::memgroup benchmark::benchmark_main)
  if(KSYNC_BUILD_TESTS)
    ksync_add_command_test(memgroup_bench_smoke COMMAND bench_memgroup ${KSYNC_BENCH_SMOKE_ARGS}
                           TIMEOUT 120)
  endif()
endif()
