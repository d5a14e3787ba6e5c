# SPDX-License-Identifier: BSD-2-Clause
# Installation: headers under <prefix>/include/ksync, a CMake package
# (find_package(ksync) -> ksync::ksync, ksync::shrinker) and the pkg-config
# files ksync.pc and ksync-shrinker.pc. Everything installed is relocatable:
# the CMake package computes its prefix from its own location, and so do the
# .pc files (prefix=${pcfiledir}/<way up>), so an install with
# `cmake --install <build> --prefix <anywhere>`, under DESTDIR, or moved
# afterwards, points at where it lies.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY include/ksync DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
set(_ksync_targets ksync)
foreach(_lib ksync_srcu ksync_memgroup ksync_shrinker ksync_list_lru ksync_workingset ksync_pressure ksync_objcache)
  if(TARGET ${_lib})
    list(APPEND _ksync_targets ${_lib})
  endif()
endforeach()
install(TARGETS ${_ksync_targets} EXPORT ksyncTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(_ksync_cmake_dir ${CMAKE_INSTALL_DATADIR}/cmake/ksync)
install(EXPORT ksyncTargets NAMESPACE ksync:: DESTINATION ${_ksync_cmake_dir})
configure_package_config_file(cmake/ksyncConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ksyncConfig.cmake INSTALL_DESTINATION ${_ksync_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ksyncConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ksyncConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/ksyncConfigVersion.cmake
        DESTINATION ${_ksync_cmake_dir})

# ksync_install_pc(<template> <name> <destination>): configure
# cmake/<template> into <build>/pkgconfig/<name>.pc and install it into
# <destination> (relative to the prefix). The template's @KSYNC_PC_PREFIX@ is
# ${pcfiledir} followed by the way up from <destination> to the prefix, and
# @KSYNC_PC_INCLUDEDIR@/@KSYNC_PC_LIBDIR@ hang off ${prefix}; only absolute
# GNUInstallDirs directories (which cannot move) are written as they are.
# The result goes through file(GENERATE), so templates may use generator
# expressions ($<TARGET_LINKER_FILE_BASE_NAME:...> keeps -l<name> right
# whatever the library's output name).
function(ksync_install_pc template name destination)
  if(IS_ABSOLUTE "${destination}")
    set(KSYNC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  else()
    cmake_path(SET _dir NORMALIZE "/prefix/${destination}")
    file(RELATIVE_PATH _up "${_dir}" "/prefix")
    string(REGEX REPLACE "/$" "" _up "${_up}")
    set(KSYNC_PC_PREFIX "\${pcfiledir}/${_up}")
  endif()
  foreach(_d INCLUDEDIR LIBDIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${_d}}")
      set(KSYNC_PC_${_d} "${CMAKE_INSTALL_${_d}}")
    else()
      set(KSYNC_PC_${_d} "\${prefix}/${CMAKE_INSTALL_${_d}}")
    endif()
  endforeach()
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${name}.pc)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${template} ${_out}.in @ONLY)
  file(GENERATE OUTPUT ${_out} INPUT ${_out}.in)
  install(FILES ${_out} DESTINATION ${destination})
endfunction()

# ksync.pc is header-only and arch-independent (share/); ksync-shrinker.pc
# names a library, so it sits beside it (lib/).
ksync_install_pc(ksync.pc.in ksync ${CMAKE_INSTALL_DATADIR}/pkgconfig)
if(TARGET ksync_srcu)
  ksync_install_pc(ksync-srcu.pc.in ksync-srcu ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET ksync_memgroup)
  ksync_install_pc(ksync-memgroup.pc.in ksync-memgroup ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET ksync_shrinker)
  ksync_install_pc(ksync-shrinker.pc.in ksync-shrinker ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET ksync_list_lru)
  ksync_install_pc(ksync-list-lru.pc.in ksync-list-lru ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET ksync_workingset)
  ksync_install_pc(ksync-workingset.pc.in ksync-workingset ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET ksync_pressure)
  ksync_install_pc(ksync-pressure.pc.in ksync-pressure ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
if(TARGET ksync_objcache)
  ksync_install_pc(ksync-objcache.pc.in ksync-objcache ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
