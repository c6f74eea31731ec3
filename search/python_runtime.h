// The embedded Python interpreter (Debian's CPython 3.11, the one python3-optuna is built
// for). Contract: ensure_python() starts it once per process with an isolated configuration
// (no PYTHONPATH/PYTHONHOME from the environment, so a pyenv or venv on PATH cannot leak in)
// whose home is $MGPU_PYTHON_HOME if set, else the prefix found at build time (/usr); a home
// without Python's standard library is Error{Unavailable} naming it, before the interpreter
// starts (which would print its path configuration and fail). After it returns the GIL is
// released: every caller takes pybind11::gil_scoped_acquire.
// import_or_explain() imports a module and, when that fails, throws Error{Unavailable} (the
// environment's fault: exit 1) in one line: Python's error, and the Debian package to install
// when the module is missing. Python's traceback goes to stderr too after
// show_python_tracebacks(true) (a command's -v). The interpreter is never finalized (finalizing
// at exit races with any thread still holding Python objects).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mgpu::search {

void ensure_python();
std::string python_version();  // e.g. "3.11.2"
std::string python_home();
// Imports `module` (GIL must be held); `debian_package` is what to install when it is missing.
void import_or_explain(const char* module, std::string_view debian_package);
// Whether a failed import also prints Python's traceback (default: no, one line only).
void show_python_tracebacks(bool on);

// Runs `source` as a fresh module and returns str(function(*arguments)): how C++ outside search/
// uses Python (the HTML report) without pybind11 in its headers. Takes the GIL itself. A
// Python exception becomes Error{IO} carrying Python's message.
// import_or_explain() for callers without pybind11: takes the GIL itself.
void check_python_module(const char* module, std::string_view debian_package);
std::string call_python(const std::string& source, const char* function, const std::vector<std::string>& arguments);

}  // namespace mgpu::search
