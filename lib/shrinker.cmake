# SPDX-License-Identifier: BSD-2-Clause
# ksync::shrinker - the compiled lockless shrinker registry (include/ksync/shrinker.h).
# Development flags (warnings, sanitizers) reach it through ksync_dev_flags,
# PRIVATE and build-tree only: nothing leaks into a parent project or the export.
add_library(ksync_shrinker STATIC ${CMAKE_CURRENT_LIST_DIR}/shrinker/shrinker.c)
add_library(ksync::shrinker ALIAS ksync_shrinker)
set_target_properties(ksync_shrinker PROPERTIES EXPORT_NAME shrinker)
target_link_libraries(ksync_shrinker PUBLIC ksync::ksync)
if(KSYNC_IS_TOP_LEVEL)
  target_link_libraries(ksync_shrinker PRIVATE $<BUILD_INTERFACE:ksync_dev_flags>)
endif()
set_target_properties(ksync_shrinker PROPERTIES POSITION_INDEPENDENT_CODE ON
                      C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
