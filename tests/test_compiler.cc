// The compile pipeline end to end on the CPU: both assemblers, the disk cache, dumps, the pool.
#include "core/compiler.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/compile_pool.h"
#include "core/error.h"
#include "tests/support/test_data.h"
#include "core/nvjitlink.h"
#include "core/ptxas.h"

namespace mgpu::core {
namespace {

namespace fs = std::filesystem;

std::string saxpy() { return ::mgpu::testing::read_test_data("saxpy.mlir"); }

class Compiler : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mgpu-compiler-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  CompileOptions cached() const {
    CompileOptions o;
    o.cache_dir = (dir_ / "cache").string();
    return o;
  }
  fs::path dir_;
};

TEST_F(Compiler, NvJitLinkAndPtxasAgreeOnResources) {
  ASSERT_TRUE(nvjitlink_available()) << "the CUDA toolkit's libnvJitLink should load here";
  const ArchSpec& arch = parse_arch("sm_90a");
  CompileOptions a, b;
  a.assembler = Assembler::NvJitLink;
  b.assembler = Assembler::Ptxas;
  CompileResult ra = compile_module(saxpy(), arch, a), rb = compile_module(saxpy(), arch, b);
  ASSERT_EQ(ra.units.size(), 1u);
  ASSERT_EQ(rb.units.size(), 1u);
  EXPECT_EQ(ra.assembler, Assembler::NvJitLink);
  EXPECT_EQ(ra.units[0].cubin.image.substr(0, 4), "\x7f" "ELF");
  ASSERT_EQ(ra.units[0].cubin.kernels.count("saxpy"), 1u) << ra.units[0].cubin.log;
  const KernelResources &x = ra.units[0].cubin.kernels.at("saxpy"), &y = rb.units[0].cubin.kernels.at("saxpy");
  EXPECT_EQ(x.registers, y.registers);
  EXPECT_EQ(x.shared_static_bytes, y.shared_static_bytes);
  EXPECT_EQ(x.spill_store_bytes, y.spill_store_bytes);
  EXPECT_GT(ra.times.lower_ms, 0);
  EXPECT_GT(ra.times.assemble_ms, 0);
  EXPECT_FALSE(ra.cache_hit);
}

TEST_F(Compiler, SecondCompileIsACacheHitWithTheSameCubin) {
  const ArchSpec& arch = parse_arch("sm_100a");
  CompileResult first = compile_module(saxpy(), arch, cached());
  CompileResult second = compile_module(saxpy(), arch, cached());
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(first.key, second.key);
  ASSERT_EQ(second.units.size(), 1u);
  EXPECT_EQ(second.units[0].cubin.image, first.units[0].cubin.image);
  EXPECT_EQ(second.units[0].ptx, first.units[0].ptx);
  EXPECT_EQ(second.units[0].kernels, first.units[0].kernels);
  EXPECT_EQ(second.units[0].cubin.kernels.at("saxpy").registers,
            first.units[0].cubin.kernels.at("saxpy").registers);
  EXPECT_EQ(second.times.lower_ms, 0);  // nothing was lowered
}

TEST_F(Compiler, KeyChangesWithEverythingThatShapesTheOutput) {
  const ArchSpec& h = parse_arch("sm_90a");
  CompileOptions o = cached();
  std::string base = cache_key(saxpy(), h, o);
  EXPECT_EQ(base, cache_key(saxpy(), h, o));
  EXPECT_NE(base, cache_key(saxpy() + " ", h, o));
  EXPECT_NE(base, cache_key(saxpy(), parse_arch("sm_100a"), o));
  CompileOptions o2 = o;
  o2.opt_level = 2;
  EXPECT_NE(base, cache_key(saxpy(), h, o2));
  CompileOptions o3 = o;
  o3.assembler = Assembler::Ptxas;
  CompileOptions o4 = o;
  o4.assembler = Assembler::NvJitLink;
  EXPECT_NE(cache_key(saxpy(), h, o4), cache_key(saxpy(), h, o3));
}

TEST_F(Compiler, DamagedEntryIsAMissAndIsRewritten) {
  const ArchSpec& arch = parse_arch("sm_90a");
  CompileResult first = compile_module(saxpy(), arch, cached());
  fs::path entry = CompileCache(cached().cache_dir).path_for(first.key);
  ASSERT_TRUE(fs::exists(entry));
  fs::resize_file(entry, fs::file_size(entry) / 2);  // a torn write, as a crash might leave
  CompileResult again = compile_module(saxpy(), arch, cached());
  EXPECT_FALSE(again.cache_hit);
  EXPECT_TRUE(compile_module(saxpy(), arch, cached()).cache_hit);
}

// A byte changed in place (same size: a flipped bit on disk, an editor) must not be loaded: a
// good config would be recorded as a wrong result. The cubin, the PTX and trailing bytes each.
TEST_F(Compiler, AnEntryAlteredInPlaceAtTheSameSizeIsAMissAndIsRewritten) {
  const ArchSpec& arch = parse_arch("sm_90a");
  CompileResult first = compile_module(saxpy(), arch, cached());
  fs::path entry = CompileCache(cached().cache_dir).path_for(first.key);
  const std::string& image = first.units.at(0).cubin.image;
  const std::string& ptx = first.units.at(0).ptx;
  std::string original;
  {
    std::ifstream in(entry, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at_cubin = original.find(image), at_ptx = original.find(ptx);
  ASSERT_NE(at_cubin, std::string::npos);
  ASSERT_NE(at_ptx, std::string::npos);
  auto damaged = [&](std::string bytes) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
    CompileResult again = compile_module(saxpy(), arch, cached());
    EXPECT_FALSE(again.cache_hit);
    EXPECT_EQ(again.units.at(0).cubin.image, image);  // recompiled, not the damaged bytes
    EXPECT_TRUE(compile_module(saxpy(), arch, cached()).cache_hit);  // and rewritten whole
  };
  std::string flipped = original;
  flipped[at_cubin + image.size() / 2] ^= 0x01;
  damaged(flipped);
  flipped = original;
  flipped[at_ptx + ptx.size() / 2] ^= 0x20;
  damaged(flipped);
  damaged(original + "x");
}

TEST_F(Compiler, ConcurrentCompilersShareTheCacheSafely) {
  const ArchSpec& arch = parse_arch("sm_90a");
  std::vector<std::string> images(4);
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < 4; ++i)
      threads.emplace_back([&, i] { images[i] = compile_module(saxpy(), arch, cached()).units.at(0).cubin.image; });
  }
  for (const std::string& img : images) EXPECT_EQ(img, images[0]);
  int temporaries = 0;
  for (auto& e : fs::recursive_directory_iterator(dir_ / "cache"))
    temporaries += e.path().string().find(".tmp.") != std::string::npos;
  EXPECT_EQ(temporaries, 0);
  EXPECT_TRUE(compile_module(saxpy(), arch, cached()).cache_hit);
}

TEST_F(Compiler, DumpWritesPassesPtxAndAssemblerLogAndBypassesTheCache) {
  CompileOptions o = cached();
  o.dump_dir = (dir_ / "dump").string();
  const ArchSpec& arch = parse_arch("sm_90a");
  compile_module(saxpy(), arch, o);
  CompileResult again = compile_module(saxpy(), arch, o);
  EXPECT_FALSE(again.cache_hit);
  EXPECT_TRUE(fs::exists(dir_ / "dump" / "smoke.ptx"));
  std::string log_name = std::string("smoke.") + std::string(to_string(again.assembler)) + ".log";
  EXPECT_TRUE(fs::exists(dir_ / "dump" / log_name)) << log_name;
}

TEST_F(Compiler, BrokenModuleNamesTheStage) {
  try {
    compile_module("module { this is not mlir", parse_arch("sm_90a"), cached());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("parse"), std::string::npos) << e.what();
  }
}

TEST_F(Compiler, PoolReturnsOneOutcomePerJobInOrder) {
  std::vector<CompileJob> jobs;
  for (int i = 0; i < 5; ++i) {
    // Distinct modules (a different bound constant) so none is a cache hit of another.
    std::string text = saxpy();
    text.replace(text.find("@saxpy"), 6, "@saxpy" + std::to_string(i));
    jobs.push_back({text, &parse_arch(i % 2 ? "sm_90a" : "sm_100a")});
  }
  jobs.push_back({"module { broken", &parse_arch("sm_90a")});
  auto out = compile_all(jobs, CompileOptions{}, 2);
  ASSERT_EQ(out.size(), jobs.size());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(out[i].ok()) << out[i].error->what();
    EXPECT_EQ(out[i].result->units.at(0).kernels.at(0), "saxpy" + std::to_string(i));
  }
  ASSERT_FALSE(out[5].ok());
  EXPECT_EQ(out[5].error->kind(), ErrorKind::InvalidInput);
}

TEST(Assembler, ParsesNames) {
  EXPECT_EQ(parse_assembler("ptxas"), Assembler::Ptxas);
  EXPECT_EQ(parse_assembler("nvjitlink"), Assembler::NvJitLink);
  EXPECT_EQ(parse_assembler("auto"), Assembler::Auto);
  EXPECT_THROW(parse_assembler("llc"), Error);
}

}  // namespace
}  // namespace mgpu::core
