# SPDX-License-Identifier: BSD-2-Clause
# cache_fuzz - a user's libFuzzer target over code that uses ksync (a cache
# under SRCU with a shrinker), in ksync's fuzzing mode (the macro
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION). Built as a fuzzer when clang's
# libFuzzer is there (KSYNC_BUILD_FUZZERS); in every build with tests its
# seeds (examples/cache_fuzz_corpus/) are replayed through fuzz/replay_main.c.
if(KSYNC_BUILD_FUZZERS AND KSYNC_HAVE_LIBFUZZER)
  ksync_add_executable(cache_fuzz SOURCES ${CMAKE_CURRENT_LIST_DIR}/cache_fuzz.c
    LIBS ksync::shrinker DEFINES FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
  target_compile_options(cache_fuzz PRIVATE -fsanitize=fuzzer -g)
  target_link_options(cache_fuzz PRIVATE -fsanitize=fuzzer)
  if(KSYNC_BUILD_TESTS)
    # libFuzzer writes what it finds into its first directory: a scratch one in
    # the build tree, so the checked-in seeds are read, never written.
    set(_scratch ${CMAKE_CURRENT_BINARY_DIR}/cache_fuzz_smoke_scratch)
    file(MAKE_DIRECTORY ${_scratch})
    add_test(NAME cache_fuzz_example_smoke COMMAND cache_fuzz -seed=1 -runs=5000 -max_len=512
             ${_scratch} ${CMAKE_CURRENT_LIST_DIR}/cache_fuzz_corpus)
    set_tests_properties(cache_fuzz_example_smoke PROPERTIES LABELS quick TIMEOUT 300)
  endif()
endif()
if(KSYNC_BUILD_TESTS)
  ksync_add_executable(cache_fuzz_replay
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/cache_fuzz.c ${PROJECT_SOURCE_DIR}/fuzz/replay_main.c
    LIBS ksync::shrinker DEFINES FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
  add_test(NAME cache_fuzz_example_replay COMMAND cache_fuzz_replay ${CMAKE_CURRENT_LIST_DIR}/cache_fuzz_corpus)
  set_tests_properties(cache_fuzz_example_replay PROPERTIES LABELS quick TIMEOUT 120)
endif()
