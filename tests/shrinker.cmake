# SPDX-License-Identifier: BSD-2-Clause
# Tests of ksync::shrinker (lib/shrinker) and the reclaim_storm smoke test.
ksync_add_test(shrinker_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/shrinker_test.c
               LIBS ksync::shrinker LABELS quick TIMEOUT 120)
# The same unit tests with the KSYNC_DEBUG checks of the headers on.
ksync_add_test(shrinker_debug_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/shrinker_test.c
               LIBS ksync::shrinker DEFINES KSYNC_DEBUG LABELS quick TIMEOUT 120)
ksync_add_test(shrinker_concurrent_test
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/shrinker_concurrent_test.c
               LIBS ksync::shrinker LABELS quick concurrent TIMEOUT 300)
# The same torture for a minute (ctest -L stress).
add_test(NAME shrinker_concurrent_stress COMMAND shrinker_concurrent_test)
set_tests_properties(shrinker_concurrent_stress PROPERTIES LABELS stress TIMEOUT 600
                     ENVIRONMENT KTEST_SECONDS=60)
ksync_add_test(shrinker_kernel_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/shrinker_kernel_test.c
               LIBS ksync::shrinker LABELS quick TIMEOUT 120)
if(KSYNC_BUILD_EXAMPLES)  # reclaim_storm is defined later (examples/), resolved at generate time
  add_test(NAME reclaim_storm_smoke
           COMMAND ${CMAKE_COMMAND} -DSTORM=$<TARGET_FILE:reclaim_storm>
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/reclaim_storm_smoke.json
                   -P ${PROJECT_SOURCE_DIR}/scripts/check_reclaim_storm_json.cmake)
  set_tests_properties(reclaim_storm_smoke PROPERTIES LABELS quick TIMEOUT 120)
endif()
# Growth past the SRCU callback limit while a node-recycling callback waits:
# the test sets a small limit on the registry's domain, so 200 groups suffice.
ksync_add_test(shrinker_cb_limit_test
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/shrinker_cb_limit_test.c
               LIBS ksync::shrinker LABELS quick TIMEOUT 120)
# Regression tests with forced schedules (yield hook): debug calls racing
# unregister and record recycling, group walks between two read sections
# racing group destroy, callbacks that unregister each other.
ksync_add_test(shrinker_schedule_test
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/shrinker_schedule_test.c
               LIBS ksync::shrinker LABELS quick concurrent TIMEOUT 120)
# The error rule, row by row from docs/errors.md.
ksync_add_test(error_rule_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/error_rule_test.c
               LIBS ksync::shrinker LABELS quick TIMEOUT 60
               DEFINES KSYNC_ERRORS_MD="${PROJECT_SOURCE_DIR}/docs/errors.md")
