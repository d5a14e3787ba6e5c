# SPDX-License-Identifier: BSD-2-Clause
# ksync::shrinker - the compiled lockless shrinker registry (include/ksync/shrinker.h).
# Development flags (warnings, sanitizers) reach it through ksync_dev_flags,
# PRIVATE only: nothing leaks into a parent project.

# The registry builds on SRCU (srcu.h: call_srcu, srcu_gp_pending), RCU lists
# and sized maps; skip it, loudly, while a checkout lacks them.
set(_ksync_shrinker_ok ON)
foreach(_h srcu.h rculist.h bitmap.h rcupdate.h)
  if(NOT EXISTS ${PROJECT_SOURCE_DIR}/include/ksync/${_h})
    set(_ksync_shrinker_ok OFF)
  endif()
endforeach()
if(_ksync_shrinker_ok)
  file(GLOB _ksync_srcu_files ${PROJECT_SOURCE_DIR}/include/ksync/srcu.h
       ${PROJECT_SOURCE_DIR}/include/ksync/impl/srcu*.h)
  set(_ksync_srcu_text "")
  foreach(_f IN LISTS _ksync_srcu_files)
    file(READ ${_f} _t)
    string(APPEND _ksync_srcu_text "${_t}")
  endforeach()
  foreach(_fn "ksync_call_srcu(struct" "ksync_srcu_gp_pending(const" "ksync_srcu_barrier(struct")
    string(FIND "${_ksync_srcu_text}" "${_fn}" _pos)
    if(_pos EQUAL -1)
      set(_ksync_shrinker_ok OFF)
    endif()
  endforeach()
endif()

if(NOT _ksync_shrinker_ok)
  message(WARNING "ksync_shrinker: srcu.h/rculist.h/bitmap.h lack what the registry needs; "
                  "ksync::shrinker, its tests and reclaim_storm are not built")
else()
  add_library(ksync_shrinker STATIC ${CMAKE_CURRENT_LIST_DIR}/shrinker/shrinker.c)
  add_library(ksync::shrinker ALIAS ksync_shrinker)
  target_link_libraries(ksync_shrinker PUBLIC ksync::ksync)
  if(KSYNC_IS_TOP_LEVEL)
    target_link_libraries(ksync_shrinker PRIVATE $<BUILD_INTERFACE:ksync_dev_flags>)
  endif()
  set_target_properties(ksync_shrinker PROPERTIES POSITION_INDEPENDENT_CODE ON
                        C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
endif()
