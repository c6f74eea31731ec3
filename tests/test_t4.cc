// The T4 reader and writer, a landscape built from T4, the methodology's score against a
// hand-computed example, and replay determinism per seed.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "harness/tune/t4_landscape.h"
#include "results/schema.h"
#include "results/t4_format.h"
#include "results/t4_store.h"
#include "search/landscape_search.h"
#include "search/methodology_score.h"

using namespace mgpu;
namespace fs = std::filesystem;

namespace {

fs::path temp_file(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / fmt::format("mgpu_t4_{}", ::getpid());
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

// Three configurations of two parameters, times in seconds: one fails to compile.
const char* kSmall = R"({"schema_version": "1.0.0", "metadata": {"timeunit": "seconds"}, "results": [
  {"configuration": {"bx": 32, "mode": "fast"}, "times": {"compilation": 0.5, "runtimes": [0.003, 0.001, 0.002]},
   "invalidity": "correct", "correctness": 1, "measurements": [{"name": "time", "value": 0.0021, "unit": "s"}]},
  {"configuration": {"bx": 64, "mode": "fast"}, "times": {"compilation": 0.25, "runtimes": [0.004, 0.005]},
   "invalidity": "correct", "correctness": 1},
  {"configuration": {"bx": 64, "mode": "safe"}, "times": {"compilation": 1.0},
   "invalidity": "compile", "correctness": 0, "measurements": [{"name": "time", "value": "CompilationFailedConfig"}]}
]})";

search::Landscape landscape(std::vector<std::optional<double>> values) {
  std::vector<search::LandscapePoint> points;
  for (size_t i = 0; i < values.size(); ++i) {
    core::TuningConfig c;
    c.set("x", static_cast<std::int64_t>(i));
    points.push_back({c, values[i], 1.0});
  }
  return search::Landscape("hand", std::move(points));
}

}  // namespace

TEST(T4Reader, ReadsASmallFileInSeconds) {
  results::T4File f = results::read_t4(temp_file("small.json", kSmall).string());
  ASSERT_EQ(f.results.size(), 3u);
  EXPECT_EQ(f.results[0].config.get_int("bx"), 32);
  EXPECT_EQ(f.results[0].config.get_str("mode"), "fast");
  EXPECT_DOUBLE_EQ(*f.results[0].objective_ms(), 2.0);      // median of 3, 1, 2 ms
  EXPECT_DOUBLE_EQ(*f.results[1].objective_ms(), 4.5);      // median of two
  EXPECT_DOUBLE_EQ(f.results[0].cost_ms(), 500 + 6);        // compile + every run
  EXPECT_FALSE(f.results[2].valid());
  EXPECT_FALSE(f.results[2].objective_ms());
  EXPECT_EQ(f.results[2].invalidity, "compile");
}

TEST(T4Reader, WritesWhatItReadsPlainAndGzip) {
  results::T4File f = results::read_t4(temp_file("small.json", kSmall).string());
  for (const char* name : {"out.json", "out.json.gz"}) {
    fs::path out = temp_file(name, "");
    results::write_t4(f, out.string());
    results::T4File g = results::read_t4(out.string());
    ASSERT_EQ(g.results.size(), f.results.size());
    for (size_t i = 0; i < f.results.size(); ++i) {
      EXPECT_EQ(g.results[i].config, f.results[i].config);
      EXPECT_EQ(g.results[i].objective_ms(), f.results[i].objective_ms());
      EXPECT_DOUBLE_EQ(g.results[i].cost_ms(), f.results[i].cost_ms());
      EXPECT_EQ(g.results[i].invalidity, f.results[i].invalidity);
    }
  }
  std::ifstream gz(temp_file("probe", "").parent_path() / "out.json.gz", std::ios::binary);
  EXPECT_EQ(gz.get(), 0x1f);  // really gzip
}

TEST(T4Reader, RefusesWhatIsNotT4) {
  for (const char* text : {"not json", "[]", R"({"results": []})", R"({"results": [{"times": {}}]})",
                           R"({"results": [{"configuration": {"a": 1}, "times": {"runtimes": ["x"]}}]})",
                           R"({"metadata": {"timeunit": "fortnights"}, "results": [{"configuration": {"a": 1}}]})"}) {
    try {
      results::read_t4(temp_file("bad.json", text).string());
      ADD_FAILURE() << "accepted " << text;
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput) << text;
    }
  }
  EXPECT_THROW(results::read_t4("/nonexistent/file.json.gz"), core::Error);
}

namespace {

// The message read_t4() refuses `path` with ("" when it reads it).
std::string refusal(const fs::path& path) {
  try {
    results::read_t4(path.string());
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput) << e.what();
    return e.what();
  }
  return "";
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One gzip member of `text` (what `gzip -c` writes).
std::string gzip_of(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

TEST(T4Reader, KnowsSchemaOneOnly) {
  auto with_version = [](const std::string& version) {
    std::string text = kSmall;
    text.replace(text.find(R"("1.0.0")"), 7, version);
    return temp_file("v.json", text);
  };
  EXPECT_EQ(refusal(with_version(R"("1.2.3")")), "");
  EXPECT_EQ(refusal(with_version(R"("1")")), "");
  EXPECT_NE(refusal(with_version(R"("2.0.0")")).find("has schema_version 2.0.0: this reader supports T4 schema 1.x only"),
            std::string::npos);
  EXPECT_NE(refusal(with_version(R"("10.0")")).find("schema_version 10.0"), std::string::npos);
  for (const char* odd : {"1", "1.0", "null", R"("")", R"(".1")", R"("v1.0.0")", "[1]"})
    EXPECT_NE(refusal(with_version(odd)).find("is no version"), std::string::npos) << odd;
  std::string none = kSmall;
  none.erase(none.find(R"("schema_version")"), std::string(R"("schema_version": "1.0.0", )").size());
  EXPECT_NE(refusal(temp_file("none.json", none)).find(R"(no "schema_version")"), std::string::npos);
}

TEST(T4Reader, NamesWhatIsWrongWithAGzipFile) {
  fs::path good = temp_file("good.json.gz", "");
  results::write_t4(results::read_t4(temp_file("small.json", kSmall).string()), good.string());
  const std::string gz = file_bytes(good);
  auto variant = [&](const std::string& bytes) { return temp_file("variant.json.gz", bytes); };
  EXPECT_NE(refusal(variant(gz.substr(0, gz.size() / 2))).find("is a truncated gzip file"), std::string::npos);
  EXPECT_NE(refusal(variant(gz.substr(0, gz.size() - 1))).find("is a truncated gzip file"), std::string::npos);
  EXPECT_NE(refusal(variant(gz + "trailing")).find("is a damaged gzip file: garbage follows"), std::string::npos);
  EXPECT_NE(refusal(variant(gz + "x")).find("garbage follows"), std::string::npos);
  std::string crc = gz;
  crc[crc.size() - 8] ^= 0x55;
  EXPECT_NE(refusal(variant(crc)).find("is a damaged gzip file: incorrect data check"), std::string::npos);
  EXPECT_NE(refusal(variant(kSmall)).find("is not a gzip file"), std::string::npos);
  EXPECT_NE(refusal(variant("")).find("is empty"), std::string::npos);
  // Two members, as `cat a.gz b.gz` makes, are one file (as for gunzip).
  std::string text = file_bytes(temp_file("small.json", kSmall));
  std::string two = gzip_of(text.substr(0, 100)) + gzip_of(text.substr(100));
  EXPECT_EQ(results::read_t4(temp_file("two.json.gz", two).string()).results.size(), 3u);
  // A non-.gz name is told apart by its bytes: gzip inside is read.
  EXPECT_EQ(results::read_t4(temp_file("zipped.json", gz).string()).results.size(), 3u);
}

// Blanks between values are squeezed as the text streams by; blanks inside strings are data.
TEST(T4Reader, BlanksInsideStringsAreKept) {
  std::string text = std::string("\n\t  ") + R"({ "schema_version" :   "1.0.0",
      "results"   :  [ { "configuration" :  { "mode" : "a   b",  "q" : "say \"  hi \\\"  ", "s" : "back\\\\   " ,
                                              "t" : "tab\t  end" },
      "times"  :  {  "runtimes" :  [ 1 ,   2 ,  3 ] } } ]   }    )" + std::string(1 << 20, ' ') + "\n";
  results::T4File f = results::read_t4(temp_file("blanks.json", text).string());
  ASSERT_EQ(f.results.size(), 1u);
  EXPECT_EQ(f.results[0].config.get_str("mode"), "a   b");
  EXPECT_EQ(f.results[0].config.get_str("q"), "say \"  hi \\\"  ");
  EXPECT_EQ(f.results[0].config.get_str("s"), "back\\\\   ");
  EXPECT_EQ(f.results[0].config.get_str("t"), "tab\t  end");
  EXPECT_DOUBLE_EQ(*f.results[0].objective_ms(), 2.0);
}

TEST(T4Reader, RefusesTimesThatAreNotTimesAndKeepsMessagesShort) {
  auto result_with = [](const std::string& times) {
    return temp_file("t.json", R"({"schema_version": "1.0.0", "results": [{"configuration": {"x": 1}, )" + times + "}]}");
  };
  EXPECT_NE(refusal(result_with(R"("times": {"runtimes": [-1]})")).find("-1 is not a time"), std::string::npos);
  EXPECT_NE(refusal(result_with(R"("times": {"compilation": -5, "runtimes": [1]})")).find("compilation time: -5 is not a time"),
            std::string::npos);
  EXPECT_NE(refusal(result_with(R"("measurements": [{"name": "time", "value": -3}])")).find("-3 is not a time"),
            std::string::npos);
  EXPECT_EQ(refusal(result_with(R"("times": {"runtimes": [1]}, "measurements": [{"name": ["time"], "value": 1}])")), "");
  std::string long_value(100000, 'x');
  std::string why = refusal(result_with(R"("times": {"runtimes": [")" + long_value + R"("]})"));
  EXPECT_LT(why.size(), 200u) << why.substr(0, 300);
  // A number beyond a double is bad input said as such (round 19, F29: "internal error", exit 1).
  for (const char* huge : {R"("times": {"runtimes": [1e999]})", R"("times": {"compilation": -1e999, "runtimes": [1]})"}) {
    const std::string said = refusal(result_with(huge));
    EXPECT_NE(said.find("not valid JSON (number overflow parsing"), std::string::npos) << said;
    EXPECT_NE(said.find("beyond a double's range"), std::string::npos) << said;
    EXPECT_EQ(said.find("json.exception"), std::string::npos) << said;
  }
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(refusal(result_with(R"("times": {"runtimes": )" + deep + "}")).find("nested more than 64 levels deep"),
            std::string::npos);
}

// A measurement's own "unit" is what its value is in: 2.1 "ms" in a file whose timeunit is
// seconds was stored as 2100 ms. The file's unit is the default only for a measurement that
// names none; a file without metadata reads each measurement by its own unit.
TEST(T4Reader, AMeasurementsOwnUnitIsHonoured) {
  auto time_of = [](const std::string& metadata, const std::string& measurement) {
    fs::path p = temp_file("u.json", R"({"schema_version": "1.0.0", )" + metadata +
                                          R"("results": [{"configuration": {"x": 1}, "invalidity": "correct", "correctness": 1, "measurements": [)" +
                                          measurement + "]}]}");
    results::T4File f = results::read_t4(p.string());
    return *f.results.at(0).objective_ms();
  };
  const std::string seconds = R"("metadata": {"timeunit": "seconds"}, )";
  EXPECT_DOUBLE_EQ(time_of(seconds, R"({"name": "time", "value": 2.1, "unit": "ms"})"), 2.1);
  EXPECT_DOUBLE_EQ(time_of(seconds, R"({"name": "time", "value": 2.1})"), 2100);       // the file's unit
  EXPECT_DOUBLE_EQ(time_of(seconds, R"({"name": "time", "value": 2.1, "unit": ""})"), 2100);
  EXPECT_DOUBLE_EQ(time_of("", R"({"name": "time", "value": 0.002, "unit": "s"})"), 2);  // no metadata
  EXPECT_DOUBLE_EQ(time_of("", R"({"name": "time", "value": 2})"), 2);                   // milliseconds
  EXPECT_DOUBLE_EQ(time_of("", R"({"name": "time", "value": 2500, "unit": "us"})"), 2.5);
  EXPECT_DOUBLE_EQ(time_of("", R"({"name": "time", "value": 2500000, "unit": "ns"})"), 2.5);
  EXPECT_DOUBLE_EQ(time_of(R"("metadata": {"timeunit": "nanoseconds"}, )", R"({"name": "time", "value": 3e6})"), 3);
  auto refused = [](const std::string& measurement) {
    return refusal(temp_file("u.json", R"({"schema_version": "1.0.0", "metadata": {"timeunit": "seconds"}, "results": [)"
                                       R"({"configuration": {"x": 1}, "measurements": [)" + measurement + "]}]}"));
  };
  std::string why = refused(R"({"name": "time", "value": 2.1, "unit": "fortnights"})");
  EXPECT_NE(why.find("result 0 time measurement: unknown time unit \"fortnights\""), std::string::npos) << why;
  why = refused(R"({"name": "time", "value": 2.1, "unit": 5})");
  EXPECT_NE(why.find("result 0 time measurement: the unit 5 is not a name"), std::string::npos) << why;
}

TEST(T4Reader, LandscapeOfTheSmallFile) {
  search::Landscape l = harness::read_t4_landscape(temp_file("small.json", kSmall).string());
  EXPECT_EQ(l.name(), "small");
  ASSERT_EQ(l.points().size(), 3u);
  EXPECT_EQ(l.space().param("bx").domain.size(), 2u);
  EXPECT_EQ(l.space().param("mode").domain.size(), 2u);
  EXPECT_EQ(l.valid_sorted(), (std::vector<double>{2.0, 4.5}));
  EXPECT_DOUBLE_EQ(l.points()[2].cost_s, 1.0);
}

TEST(T4Reader, ReadsASharedLandscape) {
  const char* path = "/work/shared/data/landscapes/convolution_A100_T4.json.gz";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is not on this machine";
  results::T4File f = results::read_t4(path);
  EXPECT_EQ(f.results.size(), 4362u);  // as its README says
  size_t invalid = 0;
  for (const auto& r : f.results) invalid += !r.valid();
  EXPECT_EQ(invalid, 161u);
  EXPECT_EQ(f.results[0].runtimes_ms.size(), 32u);
  search::Landscape l = harness::t4_landscape(f, "conv");
  EXPECT_EQ(l.space().param("block_size_x").domain.size(), 16u);
  EXPECT_EQ(l.valid_sorted().size(), 4201u);
}

// Values 1, 2, 3, 4: random search's expected best after b draws without replacement is 2.5,
// 10/6, 5/4, 1; median 2.5, so the 95% cutoff (1.075) is reached at b = 4.
TEST(MethodologyScore, HandComputedExample) {
  search::Landscape l = landscape({3.0, 1.0, 4.0, 2.0});
  search::RandomBaseline b(l);
  EXPECT_DOUBLE_EQ(b.expected_best(1), 2.5);
  EXPECT_NEAR(b.expected_best(2), 10.0 / 6, 1e-12);
  EXPECT_NEAR(b.expected_best(3), 1.25, 1e-12);
  EXPECT_EQ(b.cutoff_evals(), 4);
  // A search that measures 3 then 1: found 3, 1, 1, 1. Standardised: (2.5-3)/1.5 = -1/3, then
  // 1, 1, and 1 at b = 4 (baseline at the optimum, found the optimum): mean 2/3.
  search::SearchTrace t = {{0, 1.0}, {1, 2.0}};
  search::Score s = search::score(l, b, t);
  EXPECT_NEAR(s.by_evals, 2.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(s.fraction_evals, 1.0);
  // Measuring the worst first and nothing better: (2.5-4)/1.5, (10/6-4)/(2/3), (1.25-4)/0.25, 0.
  search::Score worst = search::score(l, b, {{2, 1.0}});
  EXPECT_NEAR(worst.by_evals, (-1.0 - 3.5 - 11.0 + 0.0) / 4, 1e-12);
  EXPECT_DOUBLE_EQ(worst.fraction_evals, 0.25);
}

// A failed configuration is drawn like any other: with values 1, 2 and one failure, one draw
// expects (1 + 2 + 2) / 3 (a lone failure counts as the worst valid value) and two draws
// expect (1 + 1 + 2) / 3.
TEST(MethodologyScore, FailuresAreDrawnToo) {
  search::Landscape l = landscape({1.0, std::nullopt, 2.0});
  search::RandomBaseline b(l);
  EXPECT_NEAR(b.expected_best(1), 5.0 / 3, 1e-12);
  EXPECT_NEAR(b.expected_best(2), 4.0 / 3, 1e-12);
  // Budget points before the first valid result are left out: failed, then 1.
  search::Score s = search::score(l, b, {{1, 1.0}, {0, 2.0}});
  EXPECT_GT(s.by_evals, 0.99);
}

TEST(LandscapeReplay, SameSeedSameTraceEveryStrategy) {
  std::vector<std::optional<double>> values;
  for (int i = 0; i < 60; ++i) values.push_back(i % 7 == 3 ? std::nullopt : std::optional<double>(std::fmod(i * 37.0, 61.0) + 1));
  search::Landscape big = landscape(values);
  for (const char* name : {"random", "tpe-native", "tpe", "cmaes"}) {
    auto run = [&](std::uint64_t seed) {
      auto s = search::make_strategy(name, search::landscape_context(big, seed));
      std::vector<size_t> order;
      for (const search::Evaluation& e : search::search_landscape(big, *s, 30)) order.push_back(e.point);
      return order;
    };
    std::vector<size_t> a = run(7), b = run(7), c = run(8);
    EXPECT_EQ(a, b) << name;
    EXPECT_EQ(a.size(), 30u) << name;
    EXPECT_NE(a, c) << name;
    EXPECT_EQ(std::set<size_t>(a.begin(), a.end()).size(), a.size()) << name << ": a point evaluated twice";
  }
}

TEST(LandscapeReplay, TimeBudgetIsSimulated) {
  search::Landscape l = harness::read_t4_landscape(temp_file("small.json", kSmall).string());
  auto s = search::make_strategy("exhaustive", search::landscape_context(l, 0));
  // Costs 0.506 s, 0.259 s, 1 s: a budget of 0.6 s ends after the second evaluation.
  search::SearchTrace t = search::search_landscape(l, *s, 10, 0.6);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_NEAR(t.back().elapsed_s, 0.765, 1e-12);
}

// A version-4 database (trials.source without 'imported') is migrated keeping its rows, its
// columns and its indexes, and then takes imported trials; export gives the file back.
TEST(T4Store, ImportsIntoAMigratedDatabaseAndExportsBack) {
  fs::path db = temp_file("v4.db", "");
  fs::remove(db);
  {
    results::Store s = results::Store::open(db.string(), results::OpenMode::ReadWrite);
    std::int64_t run = s.begin_run("tune", "x", "0");
    results::TrialRecord t;
    t.run_id = run;
    t.tmpl = {"matmul", "h", "b"};
    t.problem.key = "p";
    t.config_json = R"({"x":1})";
    t.env.device_name = "gpu";
    t.median_ms = 1.5;
    s.record_trial(t);
    // Back to version 5's CHECK, as migration 4 left it and 5 kept it.
    std::string sql = s.db().execAndGet("SELECT sql FROM sqlite_schema WHERE name = 'trials'").getString();
    sql.replace(sql.find(", 'imported')"), 13, ")");
    sql.replace(0, sql.find('('), "CREATE TABLE trials_v4");
    s.db().exec(sql);
    s.db().exec("INSERT INTO trials_v4 SELECT * FROM trials; DROP TABLE trials; ALTER TABLE trials_v4 RENAME TO trials;"
                "CREATE INDEX trials_by_key ON trials(template_id, problem_id, environment_id, config_id);"
                "CREATE INDEX trials_by_run ON trials(run_id);"
                "CREATE INDEX trials_by_kernel ON trials(kernel_hash, problem_class); DROP TABLE kernel_evidence;"
                "ALTER TABLE problems DROP COLUMN fields; ALTER TABLE problems DROP COLUMN flops; PRAGMA user_version = 5");
    t.source = "imported";
    EXPECT_THROW(s.record_trial(t), std::exception);  // what the migration is for
  }
  results::Store s = results::Store::open(db.string(), results::OpenMode::ReadWrite);
  EXPECT_EQ(results::schema_version(s.db()), results::kSchemaVersion);
  EXPECT_EQ(s.db().execAndGet("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'trials' AND sql IS NOT NULL").getInt(), 3);
  ASSERT_EQ(s.trials().size(), 1u);
  EXPECT_EQ(s.trials()[0].median_ms, 1.5);
  fs::path small = temp_file("small.json", kSmall);
  EXPECT_EQ(results::import_t4(s, small.string(), {"conv", "t4", "A100", "import", "0", {}, ""}).written, 3);
  results::TrialFilter only_imported;
  only_imported.source = "imported";
  std::vector<results::TrialRow> imported = s.trials(only_imported);
  ASSERT_EQ(imported.size(), 3u);
  EXPECT_EQ(imported[0].median_ms, 2.0);
  EXPECT_EQ(imported[0].samples_ms.size(), 3u);
  EXPECT_EQ(imported[2].status, "compile_error");
  fs::path out = temp_file("back.json", "");
  EXPECT_EQ(results::export_t4(s, out.string(), "conv/t4/A100"), 3);
  results::T4File back = results::read_t4(out.string());
  results::T4File orig = results::read_t4(small.string());
  ASSERT_EQ(back.results.size(), 3u);
  for (const results::T4Result& r : orig.results) {
    auto it = std::find_if(back.results.begin(), back.results.end(), [&](auto& b) { return b.config == r.config; });
    ASSERT_NE(it, back.results.end());
    EXPECT_EQ(it->objective_ms(), r.objective_ms());
    EXPECT_EQ(it->invalidity, r.invalidity);
  }
}

namespace {
results::T4Import import_as(const std::string& kernel) { return {kernel, "t4", "A100", "import", "0", {}, ""}; }
std::int64_t count(results::Store& s, const char* table) {
  return s.db().execAndGet(fmt::format("SELECT count(*) FROM {}", table)).getInt64();
}
}  // namespace

// Importing a file again adds nothing (it added every result a second time), and says so.
TEST(T4Store, ImportingAFileTwiceAddsNothingTheSecondTime) {
  fs::path db = temp_file("twice.db", "");
  fs::remove(db);
  results::Store s = results::Store::open(db.string(), results::OpenMode::ReadWrite);
  fs::path small = temp_file("small.json", kSmall);
  results::T4Imported first = results::import_t4(s, small.string(), import_as("conv"));
  EXPECT_EQ(first.written, 3);
  EXPECT_EQ(first.already_there, 0);
  results::T4Imported again = results::import_t4(s, small.string(), import_as("conv"));
  EXPECT_EQ(again.written, 0);
  EXPECT_EQ(again.already_there, 3);
  EXPECT_EQ(count(s, "trials"), 3);
  EXPECT_EQ(count(s, "runs"), 1);  // nothing new: no empty run either
  // Another study (kernel) of the same configs is not the same trials.
  EXPECT_EQ(results::import_t4(s, small.string(), import_as("other")).written, 3);
  EXPECT_EQ(count(s, "trials"), 6);
}

// A failure half-way (here a trigger refusing the third row) leaves nothing of the import: it
// kept the rows before it, and a retry duplicated them.
TEST(T4Store, AnImportFailingHalfWayLeavesNothing) {
  fs::path db = temp_file("half.db", "");
  fs::remove(db);
  results::Store s = results::Store::open(db.string(), results::OpenMode::ReadWrite);
  s.db().exec("CREATE TRIGGER full BEFORE INSERT ON trials WHEN (SELECT count(*) FROM trials) >= 2 "
              "BEGIN SELECT RAISE(ABORT, 'disk full, as it were'); END");
  EXPECT_THROW(results::import_t4(s, temp_file("small.json", kSmall).string(), import_as("conv")), core::Error);
  EXPECT_EQ(count(s, "trials"), 0);
  EXPECT_EQ(count(s, "runs"), 0);
  s.db().exec("DROP TRIGGER full");
  EXPECT_EQ(results::import_t4(s, temp_file("small.json", kSmall).string(), import_as("conv")).written, 3);
}

// 2^70 was stored as the string "1.1805916207174113e+21"; a zero time as a time the store
// cannot rank.
TEST(T4Store, RefusesValuesItCannotStoreAsTheyAre) {
  fs::path db = temp_file("refused.db", "");
  fs::remove(db);
  results::Store s = results::Store::open(db.string(), results::OpenMode::ReadWrite);
  fs::path big = temp_file("big.json", R"({"schema_version": "1.0.0", "results": [
    {"configuration": {"x": 1}, "times": {"runtimes": [1]}},
    {"configuration": {"x": 1180591620717411303424}, "times": {"runtimes": [1]}}]})");
  try {
    results::import_t4(s, big.string(), import_as("conv"));
    ADD_FAILURE() << "2^70 was imported";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("result 1: parameter x is 1.1805916207174113e+21, an integer beyond the 64-bit"),
              std::string::npos) << e.what();
  }
  fs::path zero = temp_file("zero.json", R"({"schema_version": "1.0.0", "results": [
    {"configuration": {"x": 1}, "times": {"runtimes": [0, 1, 2]}}]})");
  EXPECT_THROW(results::import_t4(s, zero.string(), import_as("conv")), core::Error);
  EXPECT_EQ(count(s, "trials"), 0);
}
