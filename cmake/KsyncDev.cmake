# SPDX-License-Identifier: BSD-2-Clause
# Flags and helpers for ksync's own executables (tests, examples, benchmarks,
# fuzzers). Nothing here touches global flags: every setting travels on the
# ksync_dev_flags INTERFACE target, linked only by our own targets.
include_guard(GLOBAL)
include(GNUInstallDirs)

add_library(ksync_dev_flags INTERFACE)
target_compile_options(ksync_dev_flags INTERFACE -Wall -Wextra -Werror)
target_compile_features(ksync_dev_flags INTERFACE c_std_11 cxx_std_17)

# KSYNC_ATOMICS: the atomics back-end of ksync's own executables. "ck" is
# Concurrency Kit's inline assembly (what users get by default); "builtins"
# maps the layer onto __atomic builtins (KSYNC_ATOMIC_BUILTINS), the only one
# AddressSanitizer and ThreadSanitizer can see into: an access through CK's
# assembly is invisible to them. The thread sanitizer always uses builtins.
set(KSYNC_ATOMICS "ck" CACHE STRING "Atomics back-end of ksync's own executables: ck or builtins")
set_property(CACHE KSYNC_ATOMICS PROPERTY STRINGS ck builtins)
if(NOT KSYNC_ATOMICS MATCHES "^(ck|builtins)$")
  message(FATAL_ERROR "KSYNC_ATOMICS must be ck or builtins, not '${KSYNC_ATOMICS}'")
endif()
if(KSYNC_ATOMICS STREQUAL "builtins" AND NOT KSYNC_SANITIZE STREQUAL "thread")
  target_compile_definitions(ksync_dev_flags INTERFACE KSYNC_ATOMIC_BUILTINS=1)
endif()

if(KSYNC_SANITIZE STREQUAL "thread")
  # TSan understands neither CK's inline assembly nor volatile accesses:
  # switch the atomics layer to __atomic builtins.
  target_compile_definitions(ksync_dev_flags INTERFACE KSYNC_ATOMIC_BUILTINS=1)
  target_compile_options(ksync_dev_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer -g)
  target_link_options(ksync_dev_flags INTERFACE -fsanitize=thread)
elseif(KSYNC_SANITIZE)
  target_compile_options(ksync_dev_flags INTERFACE -fsanitize=${KSYNC_SANITIZE}
                         -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  target_link_options(ksync_dev_flags INTERFACE -fsanitize=${KSYNC_SANITIZE})
endif()

# Every test carries two sorts of CTest labels (tests/README.md):
#  - its speed tier, given by its definition: quick (every build), concurrent
#    (also run under TSan), stress (the long runs, the `stress` target); a few
#    have none (the spin model, the benchmark smokes, the planted bugs);
#  - its kind, from the directory that defines it, never written by hand:
#    tests/<kind>/ gives <kind>, examples/ gives example, bench/ and fuzz/
#    give bench and fuzz. The kinds are KSYNC_TEST_KINDS; a new tests/<kind>/
#    directory adds its name here and in tests/README.md.
# One more label is in use: plant (fuzz/'s planted-bug tests). Test names
# follow tests/README.md; tests/hygiene's test_names_hygiene checks names
# and labels against these lists. scripts/run-tests.sh selects its stages
# with both sorts (-L/-LE).
set(KSYNC_TEST_TIERS quick concurrent stress)
set(KSYNC_TEST_KINDS unit torture regression model linkage hygiene conformance port
    example bench fuzz)
set(KSYNC_TEST_OTHER_LABELS plant)

# ksync_test_kind(<var>): the kind of a test defined in the current directory.
function(ksync_test_kind var)
  file(RELATIVE_PATH _rel "${ksync_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  if(_rel MATCHES "^tests/([^/]+)")
    set(_kind ${CMAKE_MATCH_1})
  elseif(_rel MATCHES "^examples(/|$)")
    set(_kind example)
  elseif(_rel MATCHES "^(bench|fuzz)(/|$)")
    set(_kind ${CMAKE_MATCH_1})
  else()
    set(_kind "")
  endif()
  if(NOT _kind IN_LIST KSYNC_TEST_KINDS)
    message(FATAL_ERROR "ksync: tests defined in ${CMAKE_CURRENT_SOURCE_DIR} have no kind: "
            "a test lives in tests/<kind>/ (kinds: ${KSYNC_TEST_KINDS}), examples/, bench/ or fuzz/")
  endif()
  set(${var} ${_kind} PARENT_SCOPE)
endfunction()

# At the end of a directory, every test it defined (through the helpers below
# or a plain add_test()) gets its kind label: so no test can forget it, and a
# later set_tests_properties(... LABELS ...) cannot drop it.
function(_ksync_label_tests_with_kind)
  get_property(_tests DIRECTORY PROPERTY TESTS)
  if(NOT _tests)
    return()
  endif()
  ksync_test_kind(_kind)
  foreach(_t IN LISTS _tests)
    get_test_property(${_t} LABELS _labels)
    if(NOT _kind IN_LIST _labels)
      set_property(TEST ${_t} APPEND PROPERTY LABELS ${_kind})
    endif()
  endforeach()
endfunction()
# Scheduled once per directory by every helper here (a directory that builds
# anything calls one; fuzz/'s plain add_test()s are labelled this way too).
function(_ksync_schedule_kind_labels)
  get_property(_done DIRECTORY PROPERTY _KSYNC_KIND_LABELS_SCHEDULED)
  if(NOT _done)
    set_property(DIRECTORY PROPERTY _KSYNC_KIND_LABELS_SCHEDULED ON)
    cmake_language(DEFER CALL _ksync_label_tests_with_kind)
  endif()
endfunction()

# ksync_add_executable(NAME SOURCES ... [LIBS ...] [DEFINES ...])
function(ksync_add_executable name)
  cmake_parse_arguments(E "" "" "SOURCES;LIBS;DEFINES" ${ARGN})
  add_executable(${name} ${E_SOURCES})
  target_link_libraries(${name} PRIVATE ksync::ksync ksync_dev_flags ${E_LIBS})
  if(E_DEFINES)
    target_compile_definitions(${name} PRIVATE ${E_DEFINES})
  endif()
  _ksync_schedule_kind_labels()
endfunction()

# ksync_add_test(NAME SOURCES ... [LABELS ...] [LIBS ...] [DEFINES ...] [ARGS ...] [TIMEOUT s])
# A test program built from SOURCES and run as the test NAME. LABELS: its
# tier (quick, concurrent, stress); its kind label is added (see above).
function(ksync_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LABELS;LIBS;DEFINES;ARGS" ${ARGN})
  ksync_add_executable(${name} SOURCES ${T_SOURCES} LIBS ${T_LIBS} DEFINES ${T_DEFINES})
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()

# ksync_add_command_test(NAME COMMAND cmd args... [LABELS ...] [TIMEOUT s])
# A test that runs a script or a program built elsewhere; labels as above.
function(ksync_add_command_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "COMMAND;LABELS" ${ARGN})
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
  _ksync_schedule_kind_labels()
endfunction()
