# SPDX-License-Identifier: BSD-2-Clause
# bench_list_lru: ksync::list_lru micro-benchmarks: add/del/count against one mutex-protected
# list, from 1 and 2 threads; walks among 1 and 10,000 groups.
if(TARGET ksync::list_lru)
  ksync_add_executable(bench_list_lru SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_list_lru.cc
                       LIBS ksync::list_lru benchmark::benchmark_main)
endif()
