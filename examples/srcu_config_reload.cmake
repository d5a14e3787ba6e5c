# SPDX-License-Identifier: BSD-2-Clause
# srcu_config_reload - the classic SRCU pattern (readers of the current
# configuration, a writer replacing it) in kernel spellings: synchronize_srcu
# and call_srcu.
ksync_add_executable(srcu_config_reload SOURCES ${CMAKE_CURRENT_LIST_DIR}/srcu_config_reload.c)
if(KSYNC_BUILD_TESTS)
  add_test(NAME srcu_config_reload_example COMMAND srcu_config_reload)
  set_tests_properties(srcu_config_reload_example PROPERTIES LABELS "quick;concurrent" TIMEOUT 60)
endif()
