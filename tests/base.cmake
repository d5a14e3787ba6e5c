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
# Every bit index and boundary constant as compile-time constants, on both
# atomics back-ends, at every optimisation level (the build is the test of
# the x86-64 immediate encodings; the run checks the values).
foreach(_opt O0 O1 O2 O3 Os)
  foreach(_backend ck builtins)
    set(_t atomic_constants_${_backend}_${_opt})
    if(_backend STREQUAL "builtins")
      ksync_add_test(${_t} SOURCES atomic_constants_test.c LABELS quick
                     DEFINES KSYNC_ATOMIC_BUILTINS=1)
    else()
      ksync_add_test(${_t} SOURCES atomic_constants_test.c LABELS quick)
    endif()
    target_compile_options(${_t} PRIVATE -${_opt})
  endforeach()
endforeach()
# Includes point down the layers of docs/architecture.md (no compiler needed).
add_test(NAME include_direction
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/include_direction.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(include_direction PROPERTIES LABELS "quick;hygiene" TIMEOUT 60)
