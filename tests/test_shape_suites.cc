// Shape suites without a GPU: named suites, suite files (and their bad rows), padded-grid
// buckets, shape distance, and the warm start that hands a new shape its neighbours' winners.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "harness/tune/shape_suite.h"
#include "kernels/matmul_suites.h"
#include "tests/support/test_data.h"

namespace mgpu::harness {
namespace {

namespace fs = std::filesystem;
using kernels::BLayout;
using kernels::DType;
using kernels::MatmulProblem;

bool has(const std::vector<MatmulProblem>& v, std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::any_of(v.begin(), v.end(), [&](const MatmulProblem& p) { return p.m == m && p.n == n && p.k == k; });
}

TEST(ShapeSuites, TheNamedLlamaSuitesHoldEachProjectionAtEachTokenCount) {
  std::vector<std::string> names;
  for (const kernels::NamedSuite& s : kernels::named_suites()) names.push_back(s.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "llama3-8b"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "llama3-70b"), names.end());
  auto s8 = kernels::named_suite("llama3-8b");
  ASSERT_EQ(s8.size(), 35u);  // 5 projections x (5 decode + 2 prefill token counts)
  for (std::int64_t m : {1, 16, 32, 64, 128, 2048, 8192}) {
    EXPECT_TRUE(has(s8, m, 6144, 4096)) << m;    // fused QKV: (32 + 2 x 8) heads x 128
    EXPECT_TRUE(has(s8, m, 4096, 4096)) << m;    // attention output
    EXPECT_TRUE(has(s8, m, 28672, 4096)) << m;   // gate + up
    EXPECT_TRUE(has(s8, m, 4096, 14336)) << m;   // down
    EXPECT_TRUE(has(s8, m, 128256, 4096)) << m;  // lm_head over Llama 3's 128,256-token vocabulary
  }
  for (const MatmulProblem& p : s8) EXPECT_EQ(p.b_layout, BLayout::NK);  // Linear weights are N x K
  auto s70 = kernels::named_suite("llama3-70b", DType::F16, DType::F16);
  EXPECT_TRUE(has(s70, 128, 10240, 8192));
  EXPECT_TRUE(has(s70, 1, 8192, 28672));
  EXPECT_TRUE(has(s70, 8192, 128256, 8192));
  EXPECT_EQ(s70.front().in_dtype, DType::F16);
  EXPECT_EQ(kernels::named_suite("llama3").size(), 70u);
  try {
    kernels::named_suite("gpt-5");
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find("llama3-8b"), std::string::npos) << e.what();
  }
}

TEST(ShapeSuites, ACsvFileWithHeaderCommentsAndDefaults) {
  MatmulProblem defaults{.in_dtype = DType::F16, .out_dtype = DType::F32, .b_layout = BLayout::KN};
  ShapeSuite s = load_shape_suite(::mgpu::testing::test_data_path("small_suite.csv"), defaults);
  EXPECT_EQ(s.name, "small_suite");
  ASSERT_EQ(s.shapes.size(), 4u);
  EXPECT_EQ(s.shapes[0].key(), "m512_n1024_k1024_f16_f32_nk");
  EXPECT_EQ(s.shapes[3].b_layout, BLayout::KN);  // the row left it out: the default
}

TEST(ShapeSuites, BadRowsAreNamed) {
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string bad = ::mgpu::testing::test_data_path("bad_suite.csv");
  EXPECT_NE(message([&] { load_shape_suite(bad, {}); }).find("bad_suite.csv line 3: n must be a positive integer, got 'abc'"),
            std::string::npos);
  fs::path dir = fs::temp_directory_path() / ("mgpu-suites-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const char* name, const char* text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  std::string json = write("s.json", R"({"name": "mine", "shapes": [{"m": 64, "n": 64, "k": 64}, {"m": 64, "n": 64}]})");
  EXPECT_NE(message([&] { load_shape_suite(json, {}); }).find("s.json shape #2: 'k' is missing"), std::string::npos);
  std::string dtype = write("d.csv", "64,64,64,fp8\n");
  EXPECT_NE(message([&] { load_shape_suite(dtype, {}); }).find("d.csv line 1: unknown dtype 'fp8'"), std::string::npos);
  std::string column = write("c.csv", "m,n,k,batch\n64,64,64,2\n");
  EXPECT_NE(message([&] { load_shape_suite(column, {}); }).find("unknown column 'batch'"), std::string::npos);
  std::string empty = write("e.csv", "# nothing\n");
  EXPECT_NE(message([&] { load_shape_suite(empty, {}); }).find("is empty"), std::string::npos);
  EXPECT_NE(message([&] { load_shape_suite((dir / "absent.csv").string(), {}); }).find("absent.csv does not exist"),
            std::string::npos);
  // A FIFO would block the read until some writer came; a folder is no file.
  const std::string fifo = (dir / "p.csv").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(message([&] { load_shape_suite(fifo, {}); }).find("is a FIFO"), std::string::npos);
  std::filesystem::create_directory(dir / "d.json");
  EXPECT_NE(message([&] { load_shape_suite((dir / "d.json").string(), {}); }).find("is a folder"), std::string::npos);
  std::string named = write("n.json", R"({"name": "mine", "shapes": [{"m": 64, "n": 64, "k": 64}, {"m": 64, "n": 64, "k": 64}]})");
  ShapeSuite ok = load_shape_suite(named, {});
  EXPECT_EQ(ok.name, "mine");
  EXPECT_EQ(ok.shapes.size(), 1u);
  EXPECT_EQ(ok.duplicates_dropped, 1);
  fs::remove_all(dir);
}

// A CSV header is told by its content: a first row naming a column ("n,k,m", "name,m,n,k"), or
// one without a number. A column named twice is refused (its last value was taken without a
// word, as a JSON key given twice is refused), and so is an unknown one, even where its fields
// are empty. A number out of range names the file, line and column, not a flag (--k).
TEST(ShapeSuites, ACsvHeaderIsReadByItsContent) {
  fs::path dir = fs::temp_directory_path() / ("mgpu-suites-header-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto suite = [&](const std::string& text) {
    std::ofstream(dir / "h.csv", std::ios::binary) << text;
    return load_shape_suite((dir / "h.csv").string(), {});
  };
  auto refusal = [&](const std::string& text) {
    try {
      suite(text);
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ShapeSuite reordered = suite("n,k,m\n256,128,512\n");
  ASSERT_EQ(reordered.shapes.size(), 1u);
  EXPECT_EQ(reordered.shapes[0].m, 512);
  EXPECT_EQ(reordered.shapes[0].n, 256);
  EXPECT_EQ(reordered.shapes[0].k, 128);
  ShapeSuite named = suite("name,M,N,K,note\nproj,64,128,256,wide\n");
  ASSERT_EQ(named.shapes.size(), 1u);
  EXPECT_EQ(named.shapes[0].key(), "m64_n128_k256_bf16_bf16_kn");
  EXPECT_EQ(suite("m,n,k,note\n64,64,64,\n").shapes.size(), 1u);  // an empty field of a known column
  EXPECT_EQ(suite("64,64,64,f16\n").shapes[0].in_dtype, DType::F16);  // no header: a row with a dtype
  EXPECT_NE(refusal("m,m,n,k\n128,256,512,512\n").find("h.csv line 1: the header names the column 'm' twice (columns 1 and 2)"),
            std::string::npos);
  EXPECT_NE(refusal("M,n,k,m\n128,256,512,512\n").find("the column 'm' twice (columns 1 and 4)"), std::string::npos);
  EXPECT_NE(refusal("m,n,k,foo\n128,256,512,\n").find("h.csv line 1: unknown column 'foo' in the header"), std::string::npos);
  EXPECT_NE(refusal("x,m,n,k\n1,512,256,256\n").find("h.csv line 1: unknown column 'x' in the header"), std::string::npos);
  EXPECT_NE(refusal("m,,n,k\n1,2,3\n").find("h.csv line 1: the header's column 2 has no name"), std::string::npos);
  EXPECT_NE(refusal("a,b,c\n1,2,3\n").find("unknown column 'a'"), std::string::npos);  // no number: a header
  const std::string big = refusal("m,n,k\n128,256,2147483648\n");
  EXPECT_NE(big.find("h.csv line 2: k must be between 1 and 2147483647, got 2147483648"), std::string::npos) << big;
  EXPECT_EQ(big.find("--"), std::string::npos) << big;
  EXPECT_NE(refusal("m,n,k\n128,256,99999999999999999999\n").find("k must be between 1 and 2147483647"), std::string::npos);
  EXPECT_EQ(suite("m,n,k\n128,256,2147483647\n").shapes[0].k, 2147483647);  // the largest is taken
  EXPECT_EQ(suite("m,n,k\n+128,256,0512\n").shapes[0].key(), "m128_n256_k512_bf16_bf16_kn");
  EXPECT_NE(refusal(std::string("m,n,k\n128,256,5") + '\0' + "x\n").find("got '5\\x00x'"), std::string::npos);
  fs::remove_all(dir);
}

// What a spreadsheet saves ("CSV UTF-8" starts with a byte order mark; Windows ends lines
// with CR LF) reads like the plain file.
TEST(ShapeSuites, ACsvFileWithAByteOrderMarkOrCrLfLines) {
  fs::path dir = fs::temp_directory_path() / ("mgpu-suites-bom-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto suite = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return load_shape_suite((dir / name).string(), {});
  };
  const std::string bom = "\xEF\xBB\xBF";
  const std::vector<std::string> texts = {bom + "m,n,k,layout\n64,128,256,nk\n512,64,64,kn\n",
                                         bom + "m,n,k,layout\r\n64,128,256,nk\r\n512,64,64,kn\r\n",
                                         "m,n,k,layout\r\n64,128,256,nk # a comment\r\n\r\n512,64,64,kn\r\n",
                                         bom + "64,128,256,,,nk\r\n512,64,64,,,kn"};
  for (const std::string& text : texts) {
    ShapeSuite s = suite("s.csv", text);
    ASSERT_EQ(s.shapes.size(), 2u) << text;
    EXPECT_EQ(s.shapes[0].m, 64);
    EXPECT_EQ(s.shapes[0].k, 256);
    EXPECT_EQ(s.shapes[0].b_layout, BLayout::NK);
    EXPECT_EQ(s.shapes[1].b_layout, BLayout::KN);
  }
  try {
    suite("u.csv", std::string("\xFF\xFEm\0,\0n\0", 9));
    ADD_FAILURE() << "UTF-16 was read";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("u.csv is UTF-16 text"), std::string::npos) << e.what();
  }
  try {
    suite("b.csv", bom);
    ADD_FAILURE() << "a file of a byte order mark alone was read";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is empty"), std::string::npos) << e.what();
  }
  try {  // only the file's first bytes are a byte order mark
    suite("m.csv", "64,64,64\n" + bom + "128,64,64\n");
    ADD_FAILURE() << "a byte order mark inside the file was read";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.csv line 2: m must be a positive integer"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// A value of a shape that is a list or an object is named, not printed (printing a deeply
// nested one would end the stack).
TEST(ShapeSuites, AJsonShapeWithANestedValue) {
  fs::path dir = fs::temp_directory_path() / ("mgpu-suites-nested-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  std::ofstream(dir / "d.json") << R"([{"m": 64, "n": )" << deep << R"(, "k": 64}])";
  try {
    load_shape_suite((dir / "d.json").string(), {});
    ADD_FAILURE() << "a nested n was read";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("d.json shape #1: 'n' must be a number or a string"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "note.json") << R"([{"m": 64, "n": 64, "k": 64, "note": {"why": ["decode"]}}])";
  EXPECT_EQ(load_shape_suite((dir / "note.json").string(), {}).shapes.size(), 1u);
  fs::remove_all(dir);
}

TEST(ShapeSuites, BucketsAreShapesWithTheSamePaddedTileGrids) {
  const kernels::MatmulTemplate& t = kernels::matmul_template(core::parse_arch("sm_90a"));
  // 1001 and 1008 rows round alike for every CTA tile height down to swap_ab's 8 (1000 and
  // 1020 did until 8-row tiles existed: 125 against 128 of them).
  std::vector<MatmulProblem> shapes = {{.m = 1001, .n = 1024, .k = 1024},
                                       {.m = 1008, .n = 1024, .k = 1024},
                                       {.m = 1100, .n = 1024, .k = 1024},
                                       {.m = 1000, .n = 1024, .k = 1024, .b_layout = BLayout::NK}};
  auto buckets = grid_buckets(t, shapes);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0], (std::vector<size_t>{0, 1}));  // every tile size rounds 1001 and 1008 alike
  EXPECT_EQ(buckets[1], (std::vector<size_t>{2}));
  EXPECT_EQ(buckets[2], (std::vector<size_t>{3}));     // another layout never shares
}

TEST(ShapeSuites, DistanceIsLogRatiosAndInfiniteAcrossDtypes) {
  MatmulProblem a{.m = 1024, .n = 4096, .k = 4096}, b{.m = 2048, .n = 4096, .k = 4096};
  EXPECT_DOUBLE_EQ(kernels::shape_distance(a, a), 0);
  EXPECT_NEAR(kernels::shape_distance(a, b), std::log(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(kernels::shape_distance(a, b), kernels::shape_distance(b, a));
  MatmulProblem c = b;
  c.in_dtype = DType::F16;
  EXPECT_TRUE(std::isinf(kernels::shape_distance(a, c)));
}

}  // namespace
}  // namespace mgpu::harness
