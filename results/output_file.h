// Writing what a command produces without ever harming a results database. Contract:
// - refuse_database_path(out, dbs, role): Error{InvalidInput} when `out` is one of `dbs` or its
//   -wal, -shm or -journal file -- by name, through symlinks, or as a hard link (same device
//   and inode) -- so no command writes its output over the results it reads.
// - write_file_atomically(path, text): writes a temporary file in the same folder and renames
//   it over `path` (a symlink is followed to its target), so an existing file is replaced
//   whole or left as it was. An existing device or pipe (/dev/stdout) is written in place. A
//   folder at `path` or a folder that cannot be written is Error{InvalidInput}; a full disk
//   is Error{IO}.
// - NewFolderGuard: for a command that creates an output folder and fills it (export --format
//   json, report). Constructed before the folder is made; unless keep() is called (the output is
//   whole), its destructor removes each file noted with will_write() that did not exist when
//   noted, then the folder itself when the guard found it missing and it is empty again -- so a
//   write that fails (a full disk, out of memory) leaves no empty folder or part of the output,
//   and never removes a file that was there before.
#pragma once

#include <string>
#include <vector>

namespace mgpu::results {

// Whether a write's errno is the environment's failure (a full disk or quota, a file-size limit,
// the device, a reader gone: exit 1) rather than the user's path (exit 2).
bool environment_errno(int err);

void refuse_database_path(const std::string& out, const std::vector<std::string>& dbs,
                          const std::string& role = "the results database");
void write_file_atomically(const std::string& path, const std::string& text);
// Error{InvalidInput} unless the folder `path` would be written in exists: "X is a file, not a
// folder" for a path under a file, "the folder X does not exist" otherwise.
void check_output_folder(const std::string& path);

class NewFolderGuard {
 public:
  explicit NewFolderGuard(std::string folder);
  ~NewFolderGuard();
  NewFolderGuard(const NewFolderGuard&) = delete;
  NewFolderGuard& operator=(const NewFolderGuard&) = delete;
  void will_write(const std::string& file);
  void keep() { kept_ = true; }

 private:
  std::string folder_;
  std::vector<std::string> new_files_;
  bool created_ = false, kept_ = false;
};

}  // namespace mgpu::results
