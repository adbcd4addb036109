// Writing a result file so that it is either complete or not there: the rule
// every hympi output follows (the CLI's --json/--trace, Domain::write_report).
#pragma once

#include <string>

namespace hympi {

// Writes `text` to `path`. "-" is standard output. A symbolic link is
// followed (the file it names is written, the link stays). The text goes to a
// temporary file beside the target, created under an unpredictable name with
// O_CREAT|O_EXCL (mkstemps: a symbolic link planted there is never
// followed), is flushed to disk (fsync) and renamed over the target, so a
// failed write (full disk, no permission) never leaves a partial or empty
// file and never destroys an earlier good one; the temporary file is removed.
// The file keeps the mode of the one it replaces (0600 stays 0600); a new one
// gets 0666 less the umask. A device or FIFO is written in place.
// Returns "" on success, else one line: "cannot write PATH: <OS reason>".
std::string write_text_file(const std::string& path, const std::string& text);

// The file `path` names once symbolic links are followed (also when the last
// link dangles: then the file it would create); `path` itself otherwise.
std::string resolve_links(std::string path);

// Whether write_text_file(path) can be expected to succeed, checked before a
// run: the target is no directory, its directory exists, a temporary file can
// be created there (it is removed again: nothing is left or changed), and the
// file system has space left. "" or the reason.
std::string check_writable_path(const std::string& path);

// A new, empty file beside `target` (a path without links: resolve_links)
// under an unpredictable name, as write_text_file's temporary file
// (O_CREAT|O_EXCL, mode 0600): its name, or "" with errno set. For writers
// that fill the file otherwise (MPI-IO: field_io.hpp) and rename it over
// the target when complete.
std::string create_temporary_file(const std::string& target);

// The mode write_text_file gives a new file: 0666 less the process's umask.
unsigned new_file_mode();

}  // namespace hympi
