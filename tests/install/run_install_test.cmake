# The install test, run by ctest as `cmake -D... -P run_install_test.cmake`.
#   STEP=install    cmake --install the build into WORK_DIR/prefix and check what is there
#   STEP=pkgconfig  build consumer.c with `pkg-config --cflags --libs gpubp`, run it
#   STEP=pkgconfig_static  the same with `pkg-config --static` and libgpubp.a
#   STEP=cmake      build consumer/ with find_package(gpubp CONFIG) (gpubp::gpubp and
#                   gpubp::gpubp_static), run both
# Inputs: BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR INCLUDEDIR VERSION SOVERSION C_COMPILER GENERATOR
#         CONFIG PKG_CONFIG EXTRA_FLAGS (sanitizer flags of the build, also needed by consumers)
cmake_minimum_required(VERSION 3.20)

set(prefix "${WORK_DIR}/prefix")
set(libdir "${prefix}/${LIBDIR}")
separate_arguments(extra_flags UNIX_COMMAND "${EXTRA_FLAGS}")
set(expected "consumer: libgpubp ${VERSION} (header ${VERSION}): ")
string(APPEND expected "3 steps written and read back, 39 values ok")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "install test: `${cmd}` failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

# Runs a consumer and compares its one line of output.
function(check_consumer exe what)
  file(REMOVE_RECURSE "${exe}.bp")
  run("${exe}" "${exe}.bp")
  string(STRIP "${run_out}" got)
  if(NOT got STREQUAL expected)
    message(FATAL_ERROR
            "install test (${what}): consumer printed\n  ${got}\nexpected\n  ${expected}")
  endif()
  message(STATUS "${what}: ${got}")
endfunction()

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE "${WORK_DIR}")
  set(cfg)
  if(CONFIG)
    set(cfg --config "${CONFIG}")
  endif()
  run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${cfg})
  foreach(f "${INCLUDEDIR}/gpubp.h" "${INCLUDEDIR}/gpubp/version.h"
            "${LIBDIR}/libgpubp.so" "${LIBDIR}/libgpubp.so.${SOVERSION}"
            "${LIBDIR}/libgpubp.so.${VERSION}" "${LIBDIR}/libgpubp.a"
            "${LIBDIR}/pkgconfig/gpubp.pc" "${LIBDIR}/cmake/gpubp/gpubpConfig.cmake"
            "${LIBDIR}/cmake/gpubp/gpubpConfigVersion.cmake"
            "${LIBDIR}/cmake/gpubp/gpubpTargets.cmake"
            "${LIBDIR}/cmake/gpubp/gpubpStaticTargets.cmake")
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "install test: ${f} is not installed under ${prefix}")
    endif()
  endforeach()
  # The soname carries the major version.
  if(OBJDUMP)
    run("${OBJDUMP}" -p "${libdir}/libgpubp.so.${VERSION}")
    if(NOT run_out MATCHES "SONAME +libgpubp\\.so\\.${SOVERSION}\n")
      message(FATAL_ERROR "install test: the soname of libgpubp is not libgpubp.so.${SOVERSION}")
    endif()
  endif()
  # Hidden visibility: the shared library exports gpubp_* and nothing else of ours.
  if(NM)
    run("${NM}" -D --defined-only "${libdir}/libgpubp.so.${VERSION}")
    string(REGEX MATCHALL "[^\n]+" lines "${run_out}")
    set(bad)
    foreach(l IN LISTS lines)
      if(l MATCHES " ([A-Za-z_][A-Za-z0-9_@.]*)$")
        set(sym "${CMAKE_MATCH_1}")
        if(NOT sym MATCHES "^(gpubp_|_)")
          list(APPEND bad "${sym}")
        endif()
      endif()
    endforeach()
    if(bad)
      message(FATAL_ERROR "install test: libgpubp.so exports symbols outside gpubp_*: ${bad}")
    endif()
  endif()
  message(STATUS "installed into ${prefix}")

elseif(STEP STREQUAL "pkgconfig" OR STEP STREQUAL "pkgconfig_static")
  set(ENV{PKG_CONFIG_PATH} "${libdir}/pkgconfig")
  set(ENV{PKG_CONFIG_LIBDIR} "${libdir}/pkgconfig")
  run("${PKG_CONFIG}" --modversion gpubp)
  string(STRIP "${run_out}" pcver)
  if(NOT pcver STREQUAL VERSION)
    message(FATAL_ERROR
            "install test: pkg-config --modversion gpubp gives ${pcver}, not ${VERSION}")
  endif()
  run("${PKG_CONFIG}" --cflags gpubp)
  separate_arguments(cflags UNIX_COMMAND "${run_out}")
  set(exe "${WORK_DIR}/${STEP}/consumer")
  file(MAKE_DIRECTORY "${WORK_DIR}/${STEP}")
  if(STEP STREQUAL "pkgconfig")
    run("${PKG_CONFIG}" --libs gpubp)
    separate_arguments(libs UNIX_COMMAND "${run_out}")
  else()
    # The static archive itself, then what Libs.private says it needs.
    run("${PKG_CONFIG}" --static --libs gpubp)
    separate_arguments(libs UNIX_COMMAND "${run_out}")
    list(TRANSFORM libs REPLACE "^-lgpubp$" "-l:libgpubp.a")
  endif()
  run("${C_COMPILER}" -std=c11 -Wall -Wextra -Werror ${extra_flags} ${cflags}
      "${SOURCE_DIR}/consumer/consumer.c" -o "${exe}" ${libs})
  # Only the installed library is on the search path (the consumer has no rpath).
  set(ENV{LD_LIBRARY_PATH} "${libdir}")
  check_consumer("${exe}" "${STEP}")

elseif(STEP STREQUAL "cmake")
  set(bdir "${WORK_DIR}/cmake-consumer")
  file(REMOVE_RECURSE "${bdir}")
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/consumer" -B "${bdir}" -G "${GENERATOR}"
      "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_PREFIX_PATH=${prefix}"
      "-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON" "-DCMAKE_BUILD_TYPE=Release"
      "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror ${EXTRA_FLAGS}"
      "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}" "-DGPUBP_EXPECTED_VERSION=${VERSION}")
  run("${CMAKE_COMMAND}" --build "${bdir}")
  check_consumer("${bdir}/consumer" "find_package gpubp::gpubp")
  check_consumer("${bdir}/consumer_static" "find_package gpubp::gpubp_static")

else()
  message(FATAL_ERROR "install test: unknown STEP '${STEP}'")
endif()
