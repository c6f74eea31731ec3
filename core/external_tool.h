// Running an external tool (ptxas, nvdisasm) with a time limit. Contract: run_external_tool()
// starts PROGRAM with ARGS (stdin /dev/null, stdout and stderr into LOG_PATH) in a process group
// of its own and waits for it at most tool_time_limit_s() seconds; past that, or once the flag
// given to set_tool_stop_flag() is set (a stop signal), the whole group -- the tool and every
// child it started -- is sent SIGTERM (a tool that cleans up on it does), then after at most 2 s
// SIGKILL, and reaped, and Error{Unavailable} says so (a tool
// that hangs is the machine's failure, not the input's). Otherwise it returns the tool's exit
// status (128 + N when a signal N ended it).
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace mgpu::core {

// $MGPU_TOOL_TIMEOUT seconds (a positive number), default 600; a value that is no positive
// finite number is refused (Error{InvalidInput}) when a tool is run.
double tool_time_limit_s();

// The flag a stop signal sets (harness/stop_signals); null: tools are stopped by the time limit only.
void set_tool_stop_flag(const std::atomic<bool>* flag);

// Whether the flag given to set_tool_stop_flag() is set: a stop was asked for.
bool tool_stop_requested();

// Kills (SIGKILL) the process group of every tool run_external_tool() is running now.
// Async-signal-safe: a worker process's signal handler calls it before the worker dies, so a
// tool in its own process group (which a terminal's Ctrl-C does not reach) is not left behind.
void kill_running_tools();

// limit_s < 0: tool_time_limit_s(). `signal`, when given, is set to the signal that ended the
// tool (0: it exited), which its status alone cannot tell from an exit code above 128.
int run_external_tool(const std::string& what, const std::string& program, const std::vector<std::string>& args,
                      const std::string& log_path, double limit_s = -1, int* signal = nullptr);

}  // namespace mgpu::core
