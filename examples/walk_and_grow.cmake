# SPDX-License-Identifier: BSD-2-Clause
# walk_and_grow - RCU list + sized map + generation counter.
ksync_add_executable(walk_and_grow SOURCES ${CMAKE_CURRENT_LIST_DIR}/walk_and_grow.c)
if(KSYNC_BUILD_TESTS)
  add_test(NAME walk_and_grow_example COMMAND walk_and_grow 0.5)
  set_tests_properties(walk_and_grow_example PROPERTIES LABELS "quick;concurrent" TIMEOUT 60)
endif()
