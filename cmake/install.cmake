# Install rules (included at the end of the top-level CMakeLists.txt): the public headers, the
# shared library gpubp (versioned soname) and the static library gpubp_static (libgpubp.a), the
# CMake package (gpubpConfig.cmake, gpubpConfigVersion.cmake, exported targets gpubp::gpubp and
# gpubp::gpubp_static) and gpubp.pc. Tools and examples install themselves.
include(CMakePackageConfigHelpers)

set(GPUBP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/gpubp" CACHE STRING
    "Where gpubpConfig.cmake is installed (relative to the prefix)")
mark_as_advanced(GPUBP_INSTALL_CMAKEDIR)

# ---- headers ---------------------------------------------------------------------------------
install(FILES "${PROJECT_SOURCE_DIR}/include/gpubp.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/gpubp" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")

# ---- libraries -------------------------------------------------------------------------------
# Two export sets: the shared library needs nothing from its consumer; the static one carries its
# private dependencies (Threads, zlib, libm, the CUDA runtime) and is only offered by the package
# when those are found, so that a consumer of the shared library needs no zlib headers.
install(TARGETS gpubp EXPORT gpubpTargets
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS gpubp_static EXPORT gpubpStaticTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT gpubpTargets NAMESPACE gpubp:: DESTINATION "${GPUBP_INSTALL_CMAKEDIR}")
install(EXPORT gpubpStaticTargets NAMESPACE gpubp:: DESTINATION "${GPUBP_INSTALL_CMAKEDIR}")

# The optional MPI library (docs/design.md §6), once its owner adds the target.
set(GPUBP_INSTALL_MPI OFF)
if(TARGET gpubp_mpi)
  set(GPUBP_INSTALL_MPI ON)
  install(TARGETS gpubp_mpi EXPORT gpubpMpiTargets
          RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
          LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT gpubpMpiTargets NAMESPACE gpubp:: DESTINATION "${GPUBP_INSTALL_CMAKEDIR}")
  # libgpubp_mpi.a goes with libgpubp.a (offered by the package when both are usable)
  install(TARGETS gpubp_mpi_static EXPORT gpubpMpiStaticTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT gpubpMpiStaticTargets NAMESPACE gpubp:: DESTINATION "${GPUBP_INSTALL_CMAKEDIR}")
endif()

# ---- CMake package ---------------------------------------------------------------------------
set(GPUBP_CONFIG_HAVE_CUDA ${GPUBP_HAVE_CUDA})
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/gpubpConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/gpubpConfig.cmake"
  INSTALL_DESTINATION "${GPUBP_INSTALL_CMAKEDIR}")
# 0.x releases promise nothing across minor versions; from 1.0 on the major version is the ABI.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_gpubp_compat SameMinorVersion)
else()
  set(_gpubp_compat SameMajorVersion)
endif()
write_basic_package_version_file("${PROJECT_BINARY_DIR}/gpubpConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_gpubp_compat})
install(FILES "${PROJECT_BINARY_DIR}/gpubpConfig.cmake"
              "${PROJECT_BINARY_DIR}/gpubpConfigVersion.cmake"
        DESTINATION "${GPUBP_INSTALL_CMAKEDIR}")

# ---- pkg-config ------------------------------------------------------------------------------
# Libs.private lists what a static link needs (pkg-config --static --libs gpubp).
set(GPUBP_PC_LIBS_PRIVATE "-lz -lpthread -lm")
foreach(_lib IN LISTS GPUBP_CODEC_LIBS)
  set(GPUBP_PC_LIBS_PRIVATE "-l${_lib} ${GPUBP_PC_LIBS_PRIVATE}")
endforeach()
if(GPUBP_HAVE_CUDA)
  set(GPUBP_PC_LIBS_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} -lcudart ${GPUBP_PC_LIBS_PRIVATE}")
endif()
# The prefix is the one given at install time (cmake --install --prefix P), so gpubp.pc is written
# by the install step itself.
foreach(_d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_d}}")
    set(_gpubp_pc_${_d} "${CMAKE_INSTALL_${_d}}")
  else()
    set(_gpubp_pc_${_d} "\${prefix}/${CMAKE_INSTALL_${_d}}")
  endif()
endforeach()
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(GPUBP_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(GPUBP_PC_LIBDIR [==[${_gpubp_pc_LIBDIR}]==])
  set(GPUBP_PC_INCLUDEDIR [==[${_gpubp_pc_INCLUDEDIR}]==])
  set(GPUBP_PC_LIBS_PRIVATE \"${GPUBP_PC_LIBS_PRIVATE}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/gpubp.pc.in\"
                 \"${PROJECT_BINARY_DIR}/pkgconfig/gpubp.pc\" @ONLY)
")
install(FILES "${PROJECT_BINARY_DIR}/pkgconfig/gpubp.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# gpubp-mpi.pc: Requires gpubp, and carries the MPI flags CMake found (include directories and
# the full paths of the MPI libraries), so that both `mpicc $(pkg-config ...)` and plain
# `cc $(pkg-config --cflags --libs gpubp-mpi)` build an MPI program, whatever the MPI.
if(GPUBP_INSTALL_MPI)
  set(_pc_cflags "")
  foreach(_i IN LISTS MPI_C_INCLUDE_DIRS)
    string(APPEND _pc_cflags " -I${_i}")
  endforeach()
  foreach(_o IN LISTS MPI_C_COMPILE_OPTIONS)
    string(APPEND _pc_cflags " ${_o}")
  endforeach()
  foreach(_d IN LISTS MPI_C_COMPILE_DEFINITIONS)
    string(APPEND _pc_cflags " -D${_d}")
  endforeach()
  set(_pc_libs "${MPI_C_LINK_FLAGS}")
  foreach(_l IN LISTS MPI_C_LIBRARIES)
    string(APPEND _pc_libs " ${_l}")
  endforeach()
  string(STRIP "${_pc_cflags}" _pc_cflags)
  string(STRIP "${_pc_libs}" _pc_libs)
  install(CODE "
    set(PROJECT_VERSION \"${PROJECT_VERSION}\")
    set(GPUBP_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    set(GPUBP_PC_LIBDIR [==[${_gpubp_pc_LIBDIR}]==])
    set(GPUBP_PC_INCLUDEDIR [==[${_gpubp_pc_INCLUDEDIR}]==])
    set(GPUBP_PC_MPI_CFLAGS [==[${_pc_cflags}]==])
    set(GPUBP_PC_MPI_LIBS [==[${_pc_libs}]==])
    configure_file(\"${PROJECT_SOURCE_DIR}/cmake/gpubp-mpi.pc.in\"
                   \"${PROJECT_BINARY_DIR}/pkgconfig/gpubp-mpi.pc\" @ONLY)
  ")
  install(FILES "${PROJECT_BINARY_DIR}/pkgconfig/gpubp-mpi.pc"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()
