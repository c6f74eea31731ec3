#include "harness/tune/t4_landscape.h"

#include <cstring>
#include <filesystem>

namespace mgpu::harness {

search::Landscape t4_landscape(const results::T4File& file, const std::string& name) {
  std::vector<search::LandscapePoint> points;
  points.reserve(file.results.size());
  for (const results::T4Result& r : file.results) points.push_back({r.config, r.objective_ms(), r.cost_ms() / 1000});
  return search::Landscape(name, std::move(points));
}

search::Landscape read_t4_landscape(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".json"})
    if (name.size() > std::strlen(ext) && name.compare(name.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
      name.resize(name.size() - std::strlen(ext));
  return t4_landscape(results::read_t4(path), name);
}

}  // namespace mgpu::harness
