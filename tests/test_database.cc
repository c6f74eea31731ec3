// Smoke test of SQLite (through SQLiteCpp): WAL, foreign keys, round trip, and a file that is
// not a database refused without being touched.
#include "results/database.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
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

// The message of the core::Error open_database (or check_database_target) throws, "" when none.
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::InvalidInput) << e.what();
    return e.what();
  }
  return "";
}

// A side file SQLite would open (-journal for a hot-journal check, -wal, -shm) that is no
// regular file is refused before SQLite opens anything: a FIFO -journal blocked the open for
// good, a FIFO -shm was "disk I/O error" (exit 1) and left a new -wal.
TEST_F(Database, SideFilesThatAreNoRegularFilesAreRefusedBeforeAnyOpen) {
  const std::string path = (dir_ / "t.db").string();
  { open_database(path, OpenMode::ReadWrite)->exec("CREATE TABLE x(a)"); }
  for (const char* suffix : {"-journal", "-wal", "-shm"}) {
    const std::string side = path + suffix;
    ASSERT_EQ(::mkfifo(side.c_str(), 0600), 0);
    for (OpenMode mode : {OpenMode::ReadOnly, OpenMode::ReadWrite}) {
      const std::string why = refusal([&] { open_database(path, mode); });
      EXPECT_NE(why.find(side + " is a FIFO (named pipe), not a file SQLite can use beside the database"),
                std::string::npos) << why;
    }
    EXPECT_NE(refusal([&] { check_database_target(path); }), "");
    fs::remove(side);
    fs::create_directory(side);
    EXPECT_NE(refusal([&] { open_database(path, OpenMode::ReadOnly); }).find(side + " is a folder"), std::string::npos);
    fs::remove(side);
    for (const char* other : {"-journal", "-wal", "-shm"}) EXPECT_FALSE(fs::exists(path + other)) << other;
  }
  // The twin: an empty regular -journal is no hot journal, and is read past as before.
  std::ofstream(path + "-journal").close();
  EXPECT_EQ(open_database(path, OpenMode::ReadOnly)->execAndGet("SELECT count(*) FROM x").getInt(), 0);
  EXPECT_EQ(refusal([&] { check_database_target(path); }), "");
}

// A -shm without its -wal (a crash leaves it so): a reader creates no -wal beside it.
TEST_F(Database, AReaderOfADatabaseWithAStrayShmCreatesNothing) {
  const std::string path = (dir_ / "t.db").string();
  { open_database(path, OpenMode::ReadWrite)->exec("CREATE TABLE x(a); INSERT INTO x VALUES (1)"); }
  ASSERT_FALSE(fs::exists(path + "-wal"));
  std::ofstream(path + "-shm") << std::string(32768, '\0');
  EXPECT_EQ(open_database(path, OpenMode::ReadOnly)->execAndGet("SELECT count(*) FROM x").getInt(), 1);
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_EQ(fs::file_size(path + "-shm"), 32768u);
  // The twin: with no -shm, a reader's -wal/-shm are removed again as before.
  fs::remove(path + "-shm");
  EXPECT_EQ(open_database(path, OpenMode::ReadOnly)->execAndGet("SELECT count(*) FROM x").getInt(), 1);
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_FALSE(fs::exists(path + "-shm"));
}

// Path problems are said as what they are, by check_database_target too (matmul calls it before
// its search-space walk): a symlink into a folder that is not there, a path under a file.
TEST_F(Database, PathProblemsAreNamedPrecisely) {
  const std::string file = (dir_ / "base.db").string();
  { open_database(file, OpenMode::ReadWrite)->exec("CREATE TABLE x(a)"); }
  const std::string dangling = (dir_ / "dang.db").string();
  fs::create_symlink("nowhere/x.db", dangling);
  for (auto check : {std::function<void()>([&] { check_database_target(dangling); }),
                     std::function<void()>([&] { open_database(dangling, OpenMode::ReadWrite); }),
                     std::function<void()>([&] { open_database(dangling, OpenMode::ReadOnly); })}) {
    const std::string why = refusal(check);
    EXPECT_NE(why.find("it is a symbolic link to nowhere/x.db, whose folder " + (dir_ / "nowhere").string() +
                       " does not exist"), std::string::npos) << why;
  }
  EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
  EXPECT_NE(refusal([&] { open_database(file + "/", OpenMode::ReadOnly); }).find("the trailing '/'"), std::string::npos);
  EXPECT_NE(refusal([&] { check_database_target(file + "/x.db"); }).find(" is a file, not a folder, so nothing can be under it"),
            std::string::npos);
  EXPECT_NE(refusal([&] { check_database_target((dir_ / "new.db/").string()); }).find("a path ending in '/'"),
            std::string::npos);
  // The twins: a symlink into a folder that is there is created through; the file reads.
  fs::create_directory(dir_ / "d");
  const std::string link = (dir_ / "l.db").string();
  fs::create_symlink("d/y.db", link);
  EXPECT_EQ(refusal([&] { check_database_target(link); }), "");
  { open_database(link, OpenMode::ReadWrite)->exec("CREATE TABLE y(a)"); }
  EXPECT_TRUE(fs::is_regular_file(dir_ / "d" / "y.db"));
  EXPECT_EQ(refusal([&] { open_database(file, OpenMode::ReadOnly); }), "");
}

}  // namespace
}  // namespace mgpu::results
