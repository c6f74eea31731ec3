// What a module may declare on the virtual device (robustness round 4): a .shared array larger
// than a block's shared memory (it wrapped modulo 2^32 to 0 bytes) or a .local array beyond
// CUDA's 512 KiB per thread (it ran out of memory) is refused when the module loads, naming
// its line and the limit; what a launch adds up is summed in 64 bits.
#include <gtest/gtest.h>

#include <string>

#include "core/emu/device.h"
#include "core/emu/exec/launch.h"

namespace mgpu::emu {
namespace {

std::string module_with(const std::string& body, const std::string& more = "") {
  return ".version 8.0\n.target sm_90a\n.address_size 64\n" + more + ".visible .entry k()\n{\n" + body + "\nret;\n}\n";
}

// The load's refusal, or "(loaded)".
std::string refusal(const std::string& text) {
  Device dev;
  try {
    dev.load(text);
  } catch (const Fault& f) {
    EXPECT_EQ(f.report.kind, ReportKind::Unsupported);
    return f.report.format();
  }
  return "(loaded)";
}

LaunchResult launch(Device& dev, const std::string& text, const std::string& kernel = "k") {
  LaunchConfig c;
  c.block[0] = 32;
  return dev.launch(dev.load(text), kernel, c, nullptr);
}

TEST(EmuDeclarations, SharedArraysBeyondABlockAreRefusedAtLoad) {
  for (const char* n : {"4294967295", "4294967296", "232449"}) {
    const std::string why = refusal(module_with(std::string(".shared .align 4 .b8 s[") + n + "];"));
    EXPECT_NE(why.find(std::string("'.shared s' is ") + n + " bytes: more than a block's shared memory on any GPU the "
                       "virtual device presents (232448 bytes on sm_90a and sm_100a)"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("PTX line 6"), std::string::npos) << why;
  }
  // The largest legal one runs; at module scope too.
  Device dev;
  EXPECT_TRUE(launch(dev, module_with(".shared .align 4 .b8 s[232448];")).ok);
  EXPECT_NE(refusal(module_with("", ".shared .align 4 .b8 g[4294967296];\n")).find("'.shared g'"), std::string::npos);
}

TEST(EmuDeclarations, SharedMemoryOfALaunchIsSummedWithoutWrapping) {
  // 18,500 arrays of 232,448 bytes: 2^32 + 5,320,704 bytes, which wrapped to 5 MB in 32 bits.
  std::string decls;
  for (int i = 0; i < 18500; ++i) decls += ".shared .align 4 .b8 s" + std::to_string(i) + "[232448];\n";
  Device dev;
  LaunchResult r = launch(dev, module_with("", decls));
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.reports.at(0).message.find("4300288000 bytes of shared memory per block (sm_90a allows 232448)"),
            std::string::npos)
      << r.reports.at(0).message;
}

TEST(EmuDeclarations, LocalMemoryIsHeldToCudasPerThreadLimit) {
  const std::string why = refusal(module_with(".local .align 4 .b8 l[2147483647];"));
  EXPECT_NE(why.find("'.local l' is 2147483647 bytes per thread: CUDA allows at most 524288 bytes (512 KiB) of local "
                     "memory per thread"),
            std::string::npos)
      << why;
  Device dev;
  EXPECT_TRUE(launch(dev, module_with(".local .align 4 .b8 l[524288];")).ok);
  // Two arrays of one kernel add up; another kernel's do not count.
  LaunchResult two = launch(dev, module_with(".local .align 4 .b8 a[300000];\n.local .align 4 .b8 b[300000];"));
  ASSERT_FALSE(two.ok);
  EXPECT_NE(two.reports.at(0).message.find("600000 bytes of local memory per thread (CUDA allows 524288, 512 KiB)"),
            std::string::npos)
      << two.reports.at(0).message;
  const std::string pair = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                           ".visible .entry a()\n{\n.local .align 4 .b8 x[300000];\nret;\n}\n"
                           ".visible .entry b()\n{\n.local .align 4 .b8 y[300000];\nret;\n}\n";
  EXPECT_TRUE(launch(dev, pair, "a").ok);
  EXPECT_TRUE(launch(dev, pair, "b").ok);
}

}  // namespace
}  // namespace mgpu::emu
