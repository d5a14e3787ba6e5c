# SPDX-License-Identifier: BSD-2-Clause
# bench_bitops: micro-benchmarks of bit operations, sized maps, RCU list walks.
ksync_add_executable(bench_bitops SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_bitops.cc
                     LIBS benchmark::benchmark_main)
