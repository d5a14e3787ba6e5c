# SPDX-License-Identifier: BSD-2-Clause
# bench_registry: ksync::shrinker against the reclaim-storm demo's rwlock
# registry, both compiled from examples/reclaim_storm/ as the demo has them.
if(TARGET ksync::shrinker)
  set(_storm ${PROJECT_SOURCE_DIR}/examples/reclaim_storm)
  ksync_add_executable(bench_registry
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_registry.cc
            ${CMAKE_CURRENT_LIST_DIR}/fx_registry.c
            ${_storm}/legacy.c ${_storm}/lockless.c
    LIBS ksync::shrinker benchmark::benchmark)
  target_include_directories(bench_registry PRIVATE ${_storm})
  set_target_properties(bench_registry PROPERTIES C_EXTENSIONS ON)
  if(KSYNC_BUILD_TESTS)
    ksync_add_command_test(registry_bench_smoke COMMAND bench_registry ${KSYNC_BENCH_SMOKE_ARGS}
                           TIMEOUT 120)
  endif()
endif()
