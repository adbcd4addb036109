# Writes build_info.hpp, the build facts of the JSON context block, with the
# source tree's git revision as of now. Included by CMakeLists.txt at
# configure time and run again by the hympi_build_info target at every
# build (cmake -P), so that the context names the code that was compiled,
# not the revision of the first configure. configure_file leaves the file
# untouched when nothing changed, so an unchanged tree recompiles nothing.
#   cmake -DHYMPI_SOURCE_DIR=... -DHYMPI_BUILD_INFO_IN=... -DHYMPI_BUILD_INFO_OUT=...
#         -DPROJECT_VERSION=... -DHYMPI_COMPILER=... -DHYMPI_FLAGS=... -P write_build_info.cmake
execute_process(COMMAND git describe --always --dirty
                WORKING_DIRECTORY ${HYMPI_SOURCE_DIR}
                OUTPUT_VARIABLE HYMPI_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT HYMPI_GIT_REVISION)
  set(HYMPI_GIT_REVISION "unknown")
endif()
configure_file(${HYMPI_BUILD_INFO_IN} ${HYMPI_BUILD_INFO_OUT} @ONLY)
