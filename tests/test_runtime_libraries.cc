// The CUDA libraries are opened at run time: the toolkit's ones load on any machine with the
// toolkit; the driver's ones may be absent, and their absence is an answer, not a crash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cupti.h"
#include "core/device_query.h"
#include "core/dynlib.h"
#include "core/error.h"
#include "core/toolkit.h"

namespace mgpu::core {
namespace {

TEST(RuntimeLibraries, ToolkitLibrariesLoadWithoutADriver) {
  EXPECT_NE(load_runtime_library(RuntimeLibrary::NvJitLink).symbol("nvJitLinkCreate"), nullptr);
  EXPECT_NE(load_runtime_library(RuntimeLibrary::Cupti).symbol("cuptiActivityEnable"), nullptr);
  EXPECT_NE(load_runtime_library(RuntimeLibrary::CublasLt).symbol("cublasLtMatmul"), nullptr);
}

TEST(RuntimeLibraries, CuptiKernelTracingOpensOrSaysWhy) {
  // CUPTI binds and registers its buffer callbacks without a GPU; with no driver, enabling
  // kernel records may be refused -- as an Unavailable error naming CUPTI, never a crash.
  KernelTrace* trace = nullptr;
  try {
    trace = &KernelTrace::get();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unavailable);
    EXPECT_NE(std::string(e.what()).find("CUPTI"), std::string::npos) << e.what();
    return;
  }
  try {
    trace->begin();
    EXPECT_TRUE(trace->take().empty());  // nothing ran
    trace->end();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unavailable);
    EXPECT_NE(std::string(e.what()).find("cupti"), std::string::npos) << e.what();
  }
}

TEST(RuntimeLibraries, CandidatesNameTheVersionedSonameFirst) {
  auto c = runtime_library_candidates(RuntimeLibrary::NvJitLink);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.front(), "libnvJitLink.so." + std::to_string(cuda_toolkit_major_version()));
  EXPECT_EQ(runtime_library_candidates(RuntimeLibrary::CudaDriver),
            std::vector<std::string>{"libcuda.so.1"});
}

TEST(RuntimeLibraries, AMissingLibraryIsUnavailableAndListsWhatWasTried) {
  std::vector<std::string> bogus = {"libdoes-not-exist.so.7", "/nonexistent/libfoo.so"};
  try {
    DynamicLibrary::open(bogus);
    FAIL() << "opened a library that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unavailable);
    std::string msg = e.what();
    EXPECT_NE(msg.find("libdoes-not-exist.so.7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("/nonexistent/libfoo.so"), std::string::npos) << msg;
  }
}

TEST(RuntimeLibraries, MissingSymbolIsNamed) {
  DynamicLibrary lib = load_runtime_library(RuntimeLibrary::NvJitLink);
  try {
    lib.require<void()>("mgpuNoSuchSymbol");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mgpuNoSuchSymbol"), std::string::npos);
  }
}

TEST(DeviceQuery, EitherGpusOrAOneLineReasonNeverAThrow) {
  DeviceReport r = query_devices();
  EXPECT_EQ(r.gpus.empty(), r.unavailable.has_value());
  if (r.unavailable) {
    EXPECT_FALSE(r.unavailable->empty());
    EXPECT_EQ(r.unavailable->find('\n'), std::string::npos) << *r.unavailable;
  }
  for (const GpuInfo& g : r.gpus) {
    EXPECT_GT(g.sm_count, 0);
    EXPECT_GT(g.memory_bytes, 0);
  }
}

}  // namespace
}  // namespace mgpu::core
