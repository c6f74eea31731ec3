// Ctrl-C (SIGINT), and what Slurm and CI send at a time limit (SIGTERM) or when the terminal
// goes (SIGHUP): a long command installs these handlers, lets the work under way finish and
// commit, and exits 128 + the signal's number (130, 143, 129); a second signal ends the process
// at once -- but the same signal from the same sender (or passed on by our parent) within half a second is one request (GNU
// timeout sends it to the process, then to its group). Shared by `matmul`, `campaign run-task` and the commands that read a database (so
// a stop never leaves a reader's -wal/-shm behind: they finish, close it, then exit).
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace mgpu::harness {

void install_stop_handlers();
// For every process from its start, until a command installs the handlers above: a stop signal
// ends it at once, as with no handler, but first kills the external tools it runs (ptxas and
// nvdisasm run in process groups of their own, which a terminal's Ctrl-C does not reach; a hung
// one would outlive us). A signal the parent ignores (nohup's SIGHUP) stays ignored.
void install_tool_killing_handlers();
// SIGPIPE ignored for the whole process (mgpu-tune's main): a reader that closes our stdout
// early (`mgpu-tune trials ... | head -1`) killed us mid-read, leaving the database's -wal/-shm
// beside it. Now the write fails (EPIPE): the command unwinds, closes its database, and
// run_cli() ends it quietly with exit 1 (README "Exit codes": output that cannot be written).
void ignore_broken_pipes();
// SIGXFSZ ignored for the whole process (both binaries' main): under a file-size limit
// (`ulimit -f`, which Slurm passes on to its jobs) a write past the limit killed us mid-write,
// leaving a half-written database, its -wal/-shm and our temporary files. Now the write fails
// (EFBIG, or a short write) and takes the full-disk path: exit 1, the file named, nothing left
// behind. The ignored disposition is inherited by the tools we run (ptxas), which fail alike.
void ignore_file_size_limit();
// Whether the file descriptor (stdout, stderr) is a pipe or socket whose reader has gone.
bool reader_gone(int fd);
const std::atomic<bool>& stop_requested();
int stop_exit_code();  // 128 + the signal received (130 when none)
// After a stop was requested: says so on stderr with what was done, and throws ExitWith{128+sig}.
void exit_if_stopped(const std::string& what_was_done);
// A command callback that runs `work` with stops deferred until it is done (and its databases
// closed), then exit_if_stopped(done): for the short commands that only read a database.
std::function<void()> deferring_stops(std::string done, std::function<void()> work);

}  // namespace mgpu::harness
