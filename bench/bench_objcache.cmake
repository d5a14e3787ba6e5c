# SPDX-License-Identifier: BSD-2-Clause
# bench_objcache: 64-byte alloc+free pairs of ksync::objcache (unaccounted,
# design A, design B) beside glibc malloc and a per-thread free list, 1..N
# threads; the charge stock with 1 and 5 slots among 1 and 8 groups.
if(TARGET ksync::objcache)
  ksync_add_executable(bench_objcache SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_objcache.cc
                       LIBS ksync::objcache ksync::memgroup benchmark::benchmark)
  if(KSYNC_BUILD_TESTS)
    ksync_add_command_test(objcache_bench_smoke
      COMMAND bench_objcache --bench_max_threads=2 ${KSYNC_BENCH_SMOKE_ARGS} TIMEOUT 120)
  endif()
endif()
