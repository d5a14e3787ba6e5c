# SPDX-License-Identifier: BSD-2-Clause
# Foundation tests: compiler.h, math.h, atomic.h, list.h, header hygiene.
ksync_add_test(test_compiler_math SOURCES test_compiler_math.c LABELS quick)
ksync_add_test(test_atomic SOURCES test_atomic.c LABELS "quick;concurrent")
ksync_add_test(test_list SOURCES test_list.c LABELS quick)
ksync_add_test(test_list_debug SOURCES test_list.c LABELS quick DEFINES KSYNC_DEBUG)

# Compiler checks that need no sanitizer: run once, from the plain build.
if(NOT KSYNC_SANITIZE)
  add_test(NAME header_hygiene
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/header_hygiene.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(header_hygiene PROPERTIES LABELS "quick;hygiene" TIMEOUT 600)
endif()
if(NOT KSYNC_SANITIZE)
  add_test(NAME packaging COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/packaging.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(packaging PROPERTIES LABELS "quick;hygiene" TIMEOUT 600)
endif()
