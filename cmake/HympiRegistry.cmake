# Every scheme and kernel file is compiled (globbed, re-globbed on each build
# with CONFIGURE_DEPENDS) and must be listed once in its registry list; a
# file that defines an entry but is missing from the list stops the
# configuration with the line to add.
#
# hympi_check_registry(<files> <entry regex> <list file> <list line format>)
#   entry regex: matches a definition, group 1 = the name;
#   list line: the text that must appear in the list file, NAME = the name.
function(hympi_check_registry files entry_regex list_file line_format)
  file(READ ${list_file} list_text)
  foreach(f IN LISTS files)
    file(STRINGS ${f} defs REGEX "${entry_regex}")
    foreach(def IN LISTS defs)
      string(REGEX REPLACE ".*${entry_regex}.*" "\\1" name "${def}")
      string(REPLACE "NAME" "${name}" line "${line_format}")
      string(FIND "${list_text}" "${line}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "${f} defines the entry '${name}' but ${list_file} does not list it: "
                            "add the line ${line}")
      endif()
    endforeach()
  endforeach()
endfunction()
