// Where the tests' data files are: $MGPU_TEST_DATA when set (a relocated test binary, as in
// the device bundle), else the source tree's tests/data as configured.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace mgpu::testing {

inline std::string test_data_path(const std::string& name) {
  const char* dir = std::getenv("MGPU_TEST_DATA");
  return std::string(dir && *dir ? dir : MGPU_TEST_DATA) + "/" + name;
}

inline std::string read_test_data(const std::string& name) {
  std::ifstream in(test_data_path(name));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mgpu::testing
