# SPDX-License-Identifier: BSD-2-Clause
# bench_memgroup: ksync::memgroup micro-benchmarks: the statistics fast path, charging, offline.
if(TARGET ksync::memgroup)
  ksync_add_executable(bench_memgroup SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_memgroup.cc
                       LIBS ksync::memgroup benchmark::benchmark_main)
endif()
