# SPDX-License-Identifier: BSD-2-Clause
# pressure_cache - issue 20's demo: a cache (ksync::list_lru, charge handles,
# a memcg-aware ksync::shrinker) that lives inside a memory limit beside a
# batch job, in a memory cgroup of its own (as root), against fixed caps and
# malloc_trim. The binary lands at <build>/examples/pressure_cache.
ksync_add_executable(pressure_cache
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/main.c
          ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/child.c
          ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/cgroup.c
          ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/reactor.c
          ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/workload.c
          ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/workingset.c
  LIBS ksync::pressure ksync::list_lru ksync::shrinker ksync::memgroup Threads::Threads m)
if(TARGET ksync::workingset)
  # the workingset study's cache (workingset.c); without it the study says so
  target_link_libraries(pressure_cache PRIVATE ksync::workingset)
  target_compile_definitions(pressure_cache PRIVATE PC_HAVE_WORKINGSET=1)
endif()
set_target_properties(pressure_cache PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
  C_EXTENSIONS ON)
if(KSYNC_BUILD_TESTS)
  # A short run with small sizes (every variant as root with cgroups, else
  # the budget path); pressure_cache/check_json.cmake checks every key the
  # demo documents and sane values, not the performance targets.
  ksync_add_command_test(pressure_cache_example
    COMMAND ${CMAKE_COMMAND} -DDEMO=$<TARGET_FILE:pressure_cache>
            -DOUT=${CMAKE_CURRENT_BINARY_DIR}/pressure_cache_example.json
            -P ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/check_json.cmake
    LABELS quick TIMEOUT 120)
  if(TARGET ksync::workingset)
    # The workingset study at a small fixed capacity (no root needed):
    # pressure_cache/check_workingset.cmake checks the per-flavour keys, that
    # shadows raise the hot hit rate (a seeded single-threaded run: the
    # same figures every time) and the shadow nodes against their budget.
    ksync_add_command_test(pressure_cache_example_workingset
      COMMAND ${CMAKE_COMMAND} -DDEMO=$<TARGET_FILE:pressure_cache>
              -DOUT=${CMAKE_CURRENT_BINARY_DIR}/pressure_cache_example_workingset.json
              -P ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/check_workingset.cmake
      LABELS quick TIMEOUT 120)
    # The variants' own cache on a ksync_lru with shadow entries (--lru both):
    # pressure_cache/check_lru.cmake. Without root: fixed-low, capped, no
    # cgroup, a fixed number of requests (deterministic): shadows raise the
    # hot hit rate for both flavours and the shadow store keeps its budget.
    ksync_add_command_test(pressure_cache_example_lru
      COMMAND ${CMAKE_COMMAND} -DDEMO=$<TARGET_FILE:pressure_cache> -DREAL=OFF
              -DOUT=${CMAKE_CURRENT_BINARY_DIR}/pressure_cache_example_lru.json
              -P ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/check_lru.cmake
      LABELS quick TIMEOUT 120)
    # The same under the ksync variant's real cgroup limit (root with a memory
    # controller; skipped, saying why, elsewhere and under sanitizers).
    ksync_add_command_test(pressure_cache_example_lru_real
      COMMAND ${CMAKE_COMMAND} -DDEMO=$<TARGET_FILE:pressure_cache> -DREAL=ON
              -DOUT=${CMAKE_CURRENT_BINARY_DIR}/pressure_cache_example_lru_real.json
              -P ${CMAKE_CURRENT_LIST_DIR}/pressure_cache/check_lru.cmake
      LABELS quick TIMEOUT 120)
    set_tests_properties(pressure_cache_example_lru_real PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED:")
  endif()
endif()
