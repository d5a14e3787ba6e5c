# SPDX-License-Identifier: BSD-2-Clause
# Installation: headers under <prefix>/include/ksync, a CMake package
# (find_package(ksync) -> ksync::ksync, ksync::shrinker) and ksync.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY include/ksync DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
set(_ksync_targets ksync)
if(TARGET ksync_shrinker)
  list(APPEND _ksync_targets ksync_shrinker)
endif()
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
configure_file(cmake/ksync.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ksync.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ksync.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)
