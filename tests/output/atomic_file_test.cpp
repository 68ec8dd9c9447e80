#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "solver/output/output.hpp"
#include "tests/output/test_support.hpp"

namespace rbfpde {
namespace {

using test::directory_listing;
using test::fresh_dir;
using test::read_text;

TEST(WriteFileAtomic, WritesExactBytesAndLeavesNoTempFile) {
  const auto dir = fresh_dir("atomic_new");
  std::string content = "line one\nline two\n";
  content.push_back('\0');
  content += "\xff binary tail";
  write_file_atomic(dir / "out.bin", content);
  EXPECT_EQ(read_text(dir / "out.bin"), content);
  EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"out.bin"});
}

TEST(WriteFileAtomic, ReplacesAnExistingFile) {
  const auto dir = fresh_dir("atomic_replace");
  write_file_atomic(dir / "history.csv", std::string(100000, 'x'));
  write_file_atomic(dir / "history.csv", "short\n");
  EXPECT_EQ(read_text(dir / "history.csv"), "short\n");
  write_file_atomic(dir / "history.csv", "");
  EXPECT_EQ(read_text(dir / "history.csv"), "");
  EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"history.csv"});
}

TEST(WriteFileAtomic, LargeContent) {
  const auto dir = fresh_dir("atomic_large");
  std::string content(20 << 20, '\0');
  for (std::size_t i = 0; i < content.size(); ++i)
    content[i] = static_cast<char>(i * 2654435761u >> 13);
  write_file_atomic(dir / "big", content);
  EXPECT_EQ(read_text(dir / "big"), content);
}

TEST(WriteFileAtomic, MissingDirectoryThrowsNamingThePath) {
  const auto dir = fresh_dir("atomic_missing");
  const auto path = dir / "missing" / "summary.json";
  try {
    write_file_atomic(path, "{}");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write " + path.string() + ": No such file or directory");
  }
  EXPECT_TRUE(directory_listing(dir).empty());
}

TEST(WriteFileAtomic, RenameFailureRemovesTheTempFile) {
  // The target is a non-empty directory: the temp file is written, the rename fails.
  const auto dir = fresh_dir("atomic_rename_fails");
  std::filesystem::create_directories(dir / "target" / "child");
  EXPECT_THROW(write_file_atomic(dir / "target", "data"), std::runtime_error);
  EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"target"});
  EXPECT_TRUE(std::filesystem::is_directory(dir / "target" / "child"));
}

TEST(WriteFileAtomic, ReadOnlyDirectoryThrowsAndKeepsTheOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  const auto dir = fresh_dir("atomic_readonly");
  write_file_atomic(dir / "summary.json", "old");
  ::chmod(dir.c_str(), 0555);
  try {
    write_file_atomic(dir / "summary.json", "new");
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write " + (dir / "summary.json").string() + ": Permission denied");
  }
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(read_text(dir / "summary.json"), "old");
  EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"summary.json"});
}

TEST(WriteFileAtomic, RelativePathWithoutDirectory) {
  const auto dir = fresh_dir("atomic_relative");
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  write_file_atomic("plain.txt", "hello");
  std::filesystem::current_path(cwd);
  EXPECT_EQ(read_text(dir / "plain.txt"), "hello");
  EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"plain.txt"});
}

}  // namespace
}  // namespace rbfpde
