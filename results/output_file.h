// Writing what a command produces without ever harming a results database. Contract:
// - refuse_database_path(out, dbs, role): Error{InvalidInput} when `out` is one of `dbs` or its
//   -wal, -shm or -journal file -- by name, through symlinks, or as a hard link (same device
//   and inode) -- so no command writes its output over the results it reads.
// - write_file_atomically(path, text): writes a temporary file in the same folder and renames
//   it over `path` (a symlink is followed to its target), so an existing file is replaced
//   whole or left as it was. An existing device or pipe (/dev/stdout) is written in place. A
//   folder at `path` or a folder that cannot be written is Error{InvalidInput}; a full disk
//   is Error{IO}.
#pragma once

#include <string>
#include <vector>

namespace mgpu::results {

void refuse_database_path(const std::string& out, const std::vector<std::string>& dbs,
                          const std::string& role = "the results database");
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace mgpu::results
