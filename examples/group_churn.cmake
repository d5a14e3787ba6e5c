# SPDX-License-Identifier: BSD-2-Clause
# group_churn - memory groups that die while their objects live on: LRU lists,
# charge handles and a memcg-aware shrinker under group churn. The binary
# lands at <build>/examples/group_churn.
ksync_add_executable(group_churn
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/group_churn/main.c
  LIBS ksync::list_lru ksync::shrinker ksync::memgroup)
set_target_properties(group_churn PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
  C_EXTENSIONS ON)
if(KSYNC_BUILD_TESTS)
  # A short run (still at least 2,000 create/offline cycles);
  # group_churn/check_json.cmake checks the JSON's keys and the demo's
  # targets. Concurrent: it runs under TSan too.
  ksync_add_command_test(group_churn_example
    COMMAND ${CMAKE_COMMAND} -DCHURN=$<TARGET_FILE:group_churn>
            -DOUT=${CMAKE_CURRENT_BINARY_DIR}/group_churn_example.json
            -P ${CMAKE_CURRENT_LIST_DIR}/group_churn/check_json.cmake
    LABELS quick concurrent TIMEOUT 120)
endif()
