// Smoke test of the CUDA toolkit: ptxas turns the lowered PTX into a cubin for both targets,
// and our reading of its resource report matches the report itself.
#include "core/ptxas.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

#include "core/error.h"
#include "core/external_tool.h"
#include "tests/support/test_data.h"
#include "core/mlir_to_ptx.h"

namespace mgpu::core {
namespace {

std::string saxpy_ptx(const ArchSpec& arch) {
  return lower_mlir_to_ptx(::mgpu::testing::read_test_data("saxpy.mlir"), arch).modules.at(0).ptx;
}

class Ptxas : public ::testing::TestWithParam<const char*> {};

TEST_P(Ptxas, AssemblesTheSmokeKernelIntoACubin) {
  const ArchSpec& arch = parse_arch(GetParam());
  Cubin c = assemble_with_ptxas(saxpy_ptx(arch), arch);
  ASSERT_GE(c.image.size(), 4u);
  EXPECT_EQ(c.image.substr(0, 4), "\x7f" "ELF");
  ASSERT_EQ(c.kernels.count("saxpy"), 1u) << c.log;
  const KernelResources& r = c.kernels.at("saxpy");
  EXPECT_GT(r.registers, 0);
  EXPECT_LE(r.registers, arch.max_regs_per_thread);
  EXPECT_EQ(r.spill_store_bytes, 0);
  EXPECT_NE(c.log.find("Used " + std::to_string(r.registers) + " registers"), std::string::npos) << c.log;
  EXPECT_NE(c.log.find(std::string(arch.name)), std::string::npos) << c.log;
}

INSTANTIATE_TEST_SUITE_P(Archs, Ptxas, ::testing::Values("sm_90a", "sm_100a"));

TEST(Ptxas, ParsesEveryFieldOfTheReport) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
      "ptxas info    : Function properties for gemm\n"
      "    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem, 560 bytes cmem[0]\n"
      "ptxas info    : Function properties for copy\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers, 384 bytes cmem[0]\n";
  auto k = parse_assembler_report(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k["gemm"].registers, 168);
  EXPECT_EQ(k["gemm"].stack_bytes, 24);
  EXPECT_EQ(k["gemm"].spill_store_bytes, 8);
  EXPECT_EQ(k["gemm"].spill_load_bytes, 12);
  EXPECT_EQ(k["gemm"].barriers, 1);
  EXPECT_EQ(k["gemm"].shared_static_bytes, 1024);
  EXPECT_EQ(k["copy"].registers, 10);
  EXPECT_EQ(k["copy"].shared_static_bytes, 0);
}

TEST(Ptxas, BrokenPtxIsACompileErrorCarryingTheLog) {
  try {
    assemble_with_ptxas(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() { bogus; }\n",
                        parse_arch("sm_90a"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Compile);
    std::string msg = e.what();
    EXPECT_NE(msg.find("ptxas failed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bogus"), std::string::npos) << msg;
  }
}

// A fake ptxas in a temporary folder, named by MGPU_PTXAS for the test's span.
struct FakePtxas {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("mgpu-fake-ptxas-" + std::to_string(::getpid()));
  std::string old;
  bool had = false;
  explicit FakePtxas(const std::string& body) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "ptxas") << "#!/bin/sh\n" << body << "\n";
    ::chmod((dir / "ptxas").c_str(), 0755);
    if (const char* e = std::getenv("MGPU_PTXAS")) old = e, had = true;
    ::setenv("MGPU_PTXAS", (dir / "ptxas").c_str(), 1);
  }
  ~FakePtxas() {
    if (had) ::setenv("MGPU_PTXAS", old.c_str(), 1);
    else ::unsetenv("MGPU_PTXAS");
    std::filesystem::remove_all(dir);
  }
};

ErrorKind kind_of_assembling(std::string* message) {
  try {
    assemble_with_ptxas(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() { ret; }\n",
                        parse_arch("sm_90a"));
  } catch (const Error& e) {
    *message = e.what();
    return e.kind();
  }
  *message = "no error";
  return ErrorKind::InvalidInput;
}

// An assembler that exits 0 without a cubin, or with bytes that are no ELF file, is a broken
// tool (the machine's failure), never a kernel with 0 registers (round 4, H05-H11).
TEST(Ptxas, AnAssemblerThatWritesNoCubinIsUnavailable) {
  FakePtxas fake("exit 0");
  std::string msg;
  EXPECT_EQ(kind_of_assembling(&msg), ErrorKind::Unavailable) << msg;
  EXPECT_NE(msg.find("wrote no cubin"), std::string::npos) << msg;
}

TEST(Ptxas, AnAssemblerThatWritesGarbageIsUnavailable) {
  FakePtxas fake(R"(out=""; while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; esac; shift; done; head -c 5000 /dev/urandom > "$out")");
  std::string msg;
  EXPECT_EQ(kind_of_assembling(&msg), ErrorKind::Unavailable) << msg;
  EXPECT_NE(msg.find("not an ELF file"), std::string::npos) << msg;
}

// An assembler ended by a signal (the out-of-memory killer's SIGKILL, a crash) or that says it
// ran out of memory failed for the machine's reason: Unavailable (env_error, retried), never the
// kernel's compile error (battery round 19, F28). The twin: a plain nonzero exit with ptxas's
// words about the PTX is the kernel's (Compile).
TEST(Ptxas, AnAssemblerKilledOrOutOfMemoryIsTheMachinesFailure) {
  struct Case {
    const char* body;
    ErrorKind kind;
    const char* said;
  };
  const Case cases[] = {
      {"kill -KILL $$", ErrorKind::Unavailable, "ended by signal 9"},
      {"kill -SEGV $$", ErrorKind::Unavailable, "ended by signal 11"},
      {"echo 'ptxas fatal   : out of memory' >&2; exit 1", ErrorKind::Unavailable, "ran out of memory"},
      {"echo \"ptxas error   : Unknown symbol 'x'\" >&2; exit 255", ErrorKind::Compile, "ptxas failed for sm_90a (exit 255)"},
  };
  for (const Case& c : cases) {
    FakePtxas fake(c.body);
    std::string msg;
    EXPECT_EQ(kind_of_assembling(&msg), c.kind) << c.body << ": " << msg;
    EXPECT_NE(msg.find(c.said), std::string::npos) << c.body << ": " << msg;
  }
}

// A hung assembler is killed, with its children, at MGPU_TOOL_TIMEOUT (round 4, H01, H02).
TEST(Ptxas, AHungAssemblerIsKilledAtTheTimeLimit) {
  FakePtxas fake("sleep 1000");
  ::setenv("MGPU_TOOL_TIMEOUT", "1", 1);
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg;
  const ErrorKind kind = kind_of_assembling(&msg);
  ::unsetenv("MGPU_TOOL_TIMEOUT");
  EXPECT_EQ(kind, ErrorKind::Unavailable) << msg;
  EXPECT_NE(msg.find("did not finish in 1 s and was killed"), std::string::npos) << msg;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
}

TEST(ExternalTool, AStopFlagEndsTheWaitAndKillsTheTool) {
  std::atomic<bool> stop{false};
  set_tool_stop_flag(&stop);
  const std::string log = (std::filesystem::temp_directory_path() / "mgpu-tool-test.log").string();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(run_external_tool("sleeper", "/bin/sh", {"/bin/sh", "-c", "sleep 1000"}, log), Error);
  stopper.join();
  set_tool_stop_flag(nullptr);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  std::filesystem::remove(log);
}

// A tool stopped (or past its limit) is sent SIGTERM first, so one that cleans up on it does
// (gcc's temporary files under a pack's build: round 19, F36); one that ignores SIGTERM is killed
// after the grace, with its group, all the same.
TEST(ExternalTool, AStoppedToolMayCleanUpAndOneThatIgnoresTheStopIsKilled) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("mgpu-tool-term-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string log = (dir / "log").string(), mine = (dir / "tmp-of-tool").string();
  const std::string cleans = "touch '" + mine + "'; trap 'rm -f \"" + mine + "\"; exit 1' TERM; while :; do sleep 0.05; done";
  EXPECT_THROW(run_external_tool("cleaner", "/bin/sh", {"/bin/sh", "-c", cleans}, log, 0.5), Error);
  EXPECT_FALSE(std::filesystem::exists(mine)) << "the tool was given no chance to clean up";
  const std::string ignores = "touch '" + mine + "'; trap '' TERM; while :; do sleep 0.05; done";
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(run_external_tool("ignorer", "/bin/sh", {"/bin/sh", "-c", ignores}, log, 0.5), Error);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  EXPECT_TRUE(std::filesystem::exists(mine));  // killed, not asked: nothing removed it
  std::filesystem::remove_all(dir);
}

TEST(ExternalTool, ReturnsTheExitCode) {
  const std::string log = (std::filesystem::temp_directory_path() / "mgpu-tool-test2.log").string();
  EXPECT_EQ(run_external_tool("sh", "/bin/sh", {"/bin/sh", "-c", "echo hi; exit 3"}, log), 3);
  std::ifstream in(log);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "hi");
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace mgpu::core
