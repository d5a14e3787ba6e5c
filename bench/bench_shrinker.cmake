# SPDX-License-Identifier: BSD-2-Clause
# bench_shrinker: ksync::shrinker micro-benchmarks.
if(TARGET ksync::shrinker)
  ksync_add_executable(bench_shrinker SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_shrinker.cc
                       LIBS ksync::shrinker benchmark::benchmark_main)
endif()
