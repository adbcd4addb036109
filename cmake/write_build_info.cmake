# Writes build_info.hpp with the source tree's git revision as of this build
# (run by the hympi_build_info target at every build, so that the JSON
# context block names the code that was compiled, not the revision of the
# first configure). configure_file leaves the file untouched when nothing
# changed, so an unchanged tree recompiles nothing.
#   cmake -DSOURCE_DIR=... -DINPUT=... -DOUTPUT=... -DPROJECT_VERSION=...
#         -DHYMPI_COMPILER=... -DHYMPI_FLAGS=... -P write_build_info.cmake
execute_process(COMMAND git describe --always --dirty
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE HYMPI_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT HYMPI_GIT_REVISION)
  set(HYMPI_GIT_REVISION "unknown")
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
