#include "search/python_runtime.h"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <pybind11/embed.h>

#include "core/error.h"

namespace py = pybind11;

namespace mgpu::search {

using core::Error;
using core::ErrorKind;

namespace {

bool show_tracebacks = false;

bool home_from_environment() {
  const char* env = std::getenv("MGPU_PYTHON_HOME");
  return env && *env;
}

// Why `home` cannot be the home of the Python we are linked with: CPython started on a folder
// without its standard library prints its whole path configuration and dies, so the one folder
// it cannot start without (lib/pythonX.Y/encodings) is looked for first.
std::optional<std::string> why_not_python_home(const std::string& home) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(home, ec)) return std::string(fs::exists(home, ec) ? "it is not a folder" : "it does not exist");
  const std::string stdlib = fmt::format("lib/python{}.{}", PY_MAJOR_VERSION, PY_MINOR_VERSION);
  if (!fs::is_directory(fs::path(home) / stdlib / "encodings", ec))
    return fmt::format("it has no {}/encodings (the standard library of Python {}.{})", stdlib, PY_MAJOR_VERSION,
                       PY_MINOR_VERSION);
  return std::nullopt;
}

// An environment problem (exit 1), said in one line before the interpreter starts.
void check_python_home(const std::string& home) {
  std::optional<std::string> why = why_not_python_home(home);
  if (!why) return;
  if (home_from_environment())
    throw Error(ErrorKind::Unavailable,
                fmt::format("MGPU_PYTHON_HOME={} is no Python {}.{} home: {} (unset it to use {}, or set it to a "
                            "bundle's python/ folder)",
                            home, PY_MAJOR_VERSION, PY_MINOR_VERSION, *why, MGPU_PYTHON_PREFIX));
  throw Error(ErrorKind::Unavailable,
              fmt::format("the embedded Python's home {} is no Python {}.{} home: {} (install python{}.{}, or set "
                          "MGPU_PYTHON_HOME)",
                          home, PY_MAJOR_VERSION, PY_MINOR_VERSION, *why, PY_MAJOR_VERSION, PY_MINOR_VERSION));
}

}  // namespace

std::string python_home() { return home_from_environment() ? std::getenv("MGPU_PYTHON_HOME") : MGPU_PYTHON_PREFIX; }

void ensure_python() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::string home = python_home();
    check_python_home(home);
    // UTF-8 mode: an isolated interpreter in a process that never set its locale reads file
    // names as ASCII, so `report -o rép` failed with a UnicodeEncodeError traceback (battery
    // round 20, F54). In UTF-8 mode names are UTF-8, and bytes that are not pass through
    // (surrogateescape), as they do for the rest of the tool.
    PyPreConfig pre;
    PyPreConfig_InitIsolatedConfig(&pre);
    pre.utf8_mode = 1;
    if (PyStatus_Exception(Py_PreInitialize(&pre)))
      throw Error(ErrorKind::Unavailable, "cannot configure the embedded Python interpreter (UTF-8 mode)");
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    PyStatus st = PyConfig_SetBytesString(&config, &config.home, home.c_str());
    if (PyStatus_Exception(st)) {
      PyConfig_Clear(&config);
      throw Error(ErrorKind::Unavailable, "cannot configure the embedded Python interpreter");
    }
    try {
      py::initialize_interpreter(&config, 0, nullptr, /*add_program_dir_to_path=*/false);
    } catch (const std::exception& e) {
      throw Error(ErrorKind::Unavailable,
                  fmt::format("cannot start the embedded Python (home {}): {}", home, e.what()));
    }
    // Hand the GIL back; callers acquire it around each use.
    PyEval_SaveThread();
  });
}

std::string python_version() {
  ensure_python();
  py::gil_scoped_acquire gil;
  return py::module_::import("platform").attr("python_version")().cast<std::string>();
}

void show_python_tracebacks(bool on) { show_tracebacks = on; }

void import_or_explain(const char* module, std::string_view debian_package) {
  try {
    py::module_::import(module);
  } catch (const py::error_already_set& e) {
    // The environment's fault, not the input's (exit 1): a Python home without the module, or
    // one its libraries cannot be loaded from (a memory limit: "failed to map segment"). The
    // error in one line; Python's traceback of importlib frames only when asked for (-v).
    if (show_tracebacks) fmt::print(stderr, "mgpu-tune: the embedded Python's error importing {}:\n{}\n", module, e.what());
    std::string type, why;
    try {
      type = py::str(e.type().attr("__name__")).cast<std::string>();
      why = fmt::format("{}: {}", type, py::str(e.value()).cast<std::string>());
    } catch (const std::exception&) {
      why = e.what();
      why = why.substr(0, why.find("\n\nAt:"));
    }
    for (char& c : why)
      if (c == '\n' || c == '\r') c = ' ';
    // Missing (it, or a module it imports): install it. Present but failing to load: say so --
    // installing it again would not help.
    const std::string advice =
        type == "ModuleNotFoundError"
            ? fmt::format("install it with: apt-get install {}, or set MGPU_PYTHON_HOME to a Python home that has it",
                          debian_package)
            : std::string("it is installed, but failed to load: a limit on the process's memory (ulimit -v) or a "
                          "damaged installation?");
    throw Error(ErrorKind::Unavailable, fmt::format("the embedded Python {} (home {}) cannot import {}: {} ({})", PY_VERSION,
                                                    python_home(), module, why, advice));
  }
}

void check_python_module(const char* module, std::string_view debian_package) {
  ensure_python();
  py::gil_scoped_acquire gil;
  import_or_explain(module, debian_package);
}

std::string call_python(const std::string& source, const char* function, const std::vector<std::string>& arguments) {
  ensure_python();
  py::gil_scoped_acquire gil;
  try {
    py::dict scope;
    scope["__builtins__"] = py::module_::import("builtins");
    py::exec(source, scope);
    py::tuple args(arguments.size());
    // Arguments are bytes as the caller has them: a path is any bytes on Linux (-o $'\xffrep'), so
    // each is decoded as os.fsdecode() would (UTF-8, other bytes as surrogates, which open() and
    // os.makedirs() turn back into the same bytes), and the result encoded the same way back.
    for (size_t i = 0; i < arguments.size(); ++i) {
      PyObject* a = PyUnicode_DecodeUTF8(arguments[i].data(), static_cast<Py_ssize_t>(arguments[i].size()),
                                         "surrogateescape");
      if (!a) throw py::error_already_set();
      args[i] = py::reinterpret_steal<py::object>(a);
    }
    py::str result(scope[function](*args));
    PyObject* b = PyUnicode_AsEncodedString(result.ptr(), "utf-8", "surrogateescape");
    if (!b) throw py::error_already_set();
    return py::reinterpret_steal<py::bytes>(b).cast<std::string>();
  } catch (const py::error_already_set& e) {
    throw Error(ErrorKind::IO, fmt::format("Python {} failed: {}", function, e.what()));
  }
}

}  // namespace mgpu::search
