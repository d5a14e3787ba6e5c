# SPDX-License-Identifier: BSD-2-Clause
# What check_lru.cmake and check_workingset.cmake share (include()d by both).
#
# pc_flavour_keys(<json> <label> <keys> <path>...): reads each key of the
# list <keys> from <json> at <path>... <key> and sets it in the caller's
# scope; fatal, naming <label>.<key>, when one is missing or negative, or
# when one of the four hit rates (hot_hit_rate_shadow, hot_hit_rate_no_shadow,
# hit_rate_shadow, hit_rate_no_shadow) is above 1.
function(pc_flavour_keys json label keys)
  foreach(k IN LISTS keys)
    string(JSON val ERROR_VARIABLE e GET "${json}" ${ARGN} ${k})
    if(e)
      message(FATAL_ERROR "${label}.${k} missing: ${e}")
    endif()
    if(val LESS 0)
      message(FATAL_ERROR "${label}.${k} = ${val} is negative")
    endif()
    if(k MATCHES "^(hot_)?hit_rate_(no_)?shadow$" AND val GREATER 1)
      message(FATAL_ERROR "${label}.${k} = ${val} > 1")
    endif()
    set(${k} ${val} PARENT_SCOPE)
  endforeach()
endfunction()
