# SPDX-License-Identifier: BSD-2-Clause
# reclaim_storm - the main job: legacy rwlock registry vs ksync::shrinker on
# the lockless-shrink series' workload. The binary lands at
# <build>/examples/reclaim_storm (the README's main command runs it).
ksync_add_executable(reclaim_storm
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/reclaim_storm/main.c
          ${CMAKE_CURRENT_LIST_DIR}/reclaim_storm/legacy.c
          ${CMAKE_CURRENT_LIST_DIR}/reclaim_storm/lockless.c
  LIBS ksync::shrinker m)
set_target_properties(reclaim_storm PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
  C_EXTENSIONS ON)
if(KSYNC_BUILD_TESTS)
  # A short run with tiny sizes; reclaim_storm/check_json.cmake checks its
  # JSON report (the keys the demo documents, sane values).
  ksync_add_command_test(reclaim_storm_example
    COMMAND ${CMAKE_COMMAND} -DSTORM=$<TARGET_FILE:reclaim_storm>
            -DOUT=${CMAKE_CURRENT_BINARY_DIR}/reclaim_storm_example.json
            -P ${CMAKE_CURRENT_LIST_DIR}/reclaim_storm/check_json.cmake
    LABELS quick TIMEOUT 120)
endif()
