// A T4 file as a landscape strategies can search (search/landscape.h): every recorded
// configuration is a point; a valid one answers its median runtime, an invalid one (failed to
// compile, to run, or to verify) is a failure; each point costs its recorded compile time plus
// its benchmark runs. Contract: Error{InvalidInput} as read_t4() and Landscape() say (a file
// that records a configuration twice, or configurations with different parameters).
#pragma once

#include <string>

#include "results/t4_format.h"
#include "search/landscape.h"

namespace mgpu::harness {

search::Landscape t4_landscape(const results::T4File& file, const std::string& name);
search::Landscape read_t4_landscape(const std::string& path);  // named for the file

}  // namespace mgpu::harness
