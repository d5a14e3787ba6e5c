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

# ksync_add_executable(NAME SOURCES ... [LIBS ...] [DEFINES ...])
function(ksync_add_executable name)
  cmake_parse_arguments(E "" "" "SOURCES;LIBS;DEFINES" ${ARGN})
  add_executable(${name} ${E_SOURCES})
  target_link_libraries(${name} PRIVATE ksync::ksync ksync_dev_flags ${E_LIBS})
  if(E_DEFINES)
    target_compile_definitions(${name} PRIVATE ${E_DEFINES})
  endif()
endfunction()

# ksync_add_test(NAME SOURCES ... [LABELS ...] [LIBS ...] [DEFINES ...] [ARGS ...] [TIMEOUT s])
# Labels in use: quick (every build), concurrent (also run under TSan),
# stress (long runs, the `stress` target), model (spin), hygiene, bench.
function(ksync_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LABELS;LIBS;DEFINES;ARGS" ${ARGN})
  ksync_add_executable(${name} SOURCES ${T_SOURCES} LIBS ${T_LIBS} DEFINES ${T_DEFINES})
  add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()
