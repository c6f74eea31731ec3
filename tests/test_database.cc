// Smoke test of SQLite (through SQLiteCpp): WAL, foreign keys, round trip, and a file that is
// not a database refused without being touched.
#include "results/database.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace mgpu::results {
namespace {

namespace fs = std::filesystem;

class Database : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mgpu-db-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(Database, OpensInWalModeWithForeignKeysAndRoundTrips) {
  std::string path = (dir_ / "t.db").string();
  {
    auto db = open_database(path, OpenMode::ReadWrite);
    EXPECT_EQ(db->execAndGet("PRAGMA journal_mode").getString(), "wal");
    EXPECT_EQ(db->execAndGet("PRAGMA foreign_keys").getInt(), 1);
    db->exec("CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE c(p INTEGER REFERENCES p(id))");
    db->exec("INSERT INTO p VALUES (7); INSERT INTO c VALUES (7)");
    EXPECT_THROW(db->exec("INSERT INTO c VALUES (8)"), SQLite::Exception);  // FK enforced
  }
  auto ro = open_database(path, OpenMode::ReadOnly);
  EXPECT_EQ(ro->execAndGet("SELECT count(*) FROM c").getInt(), 1);
  EXPECT_TRUE(integrity_ok(*ro));
}

TEST_F(Database, NotADatabaseIsInvalidInputAndTheFileIsUntouched) {
  fs::path path = dir_ / "notes.txt";
  const std::string content(4096, 'x');
  std::ofstream(path) << content;
  try {
    open_database(path.string(), OpenMode::ReadWrite);
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput);
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
  }
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  EXPECT_EQ(ss.str(), content);
  EXPECT_FALSE(fs::exists(path.string() + "-wal"));
}

TEST_F(Database, MissingDatabaseOpenedReadOnlyIsInvalidInput) {
  EXPECT_THROW(open_database((dir_ / "absent.db").string(), OpenMode::ReadOnly), core::Error);
  EXPECT_FALSE(fs::exists(dir_ / "absent.db"));
}

}  // namespace
}  // namespace mgpu::results
