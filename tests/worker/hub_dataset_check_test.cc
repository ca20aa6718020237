// A hub names the dataset a worker opens; the worker opens only a known
// name or a directory under one it allows, however the path is spelled.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "tests/support/files.h"
#include "worker/join_reply_check.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class HubDataset : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("hub-dataset");
    fs::create_directories(dir_ / "allowed" / "shard");
    fs::create_directories(dir_ / "allowedx");
    fs::create_directories(dir_ / "private");
    fs::create_directory_symlink(dir_ / "private", dir_ / "allowed" / "link");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Refused(const fs::path& p) {
    try {
      CheckHubDataset(p.string(), {(dir_ / "allowed").string()});
      ADD_FAILURE() << p << " was allowed";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("--allow-data"));
    }
  }
  fs::path dir_;
};

TEST_F(HubDataset, KnownNamesAndPathsUnderAnAllowedDirectoryAreAccepted) {
  EXPECT_NO_THROW(CheckHubDataset("fashion-mnist", {}));
  EXPECT_NO_THROW(CheckHubDataset("cifar10", {}));
  const std::string allowed = (dir_ / "allowed").string();
  EXPECT_NO_THROW(CheckHubDataset(allowed, {allowed}));
  EXPECT_NO_THROW(CheckHubDataset((dir_ / "allowed" / "shard").string(), {allowed}));
  EXPECT_NO_THROW(CheckHubDataset((dir_ / "allowed" / "not-yet").string(), {allowed + "/"}));
  EXPECT_NO_THROW(
      CheckHubDataset((dir_ / "private").string(), {"/nowhere", (dir_ / "private").string()}));
}

TEST_F(HubDataset, EverythingElseIsRefusedSayingHowToAllowIt) {
  Refused(dir_ / "private");
  Refused(dir_ / "allowedx");                    // a prefix of the name is not a parent
  Refused(dir_ / "allowed" / ".." / "private");  // .. leaves the directory
  Refused(dir_ / "allowed" / "link");            // so does a symbolic link
  Refused(dir_ / "allowed" / "link" / "deeper");
  Refused("/etc");
  Refused("fashion-mnist-but-not-quite");
  try {
    CheckHubDataset("/etc", {});
    ADD_FAILURE() << "/etc allowed with no directory allowed";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/etc"));
    EXPECT_THAT(e.what(), HasSubstr("fashion-mnist"));
  }
}

TEST_F(HubDataset, APathWithANulByteIsRefusedWhateverPrecedesIt) {
  // The file system would see only the allowed part before the NUL.
  const std::string allowed = (dir_ / "allowed").string();
  for (const std::string& tail : {std::string("/../../private"), std::string()}) {
    const std::string path = allowed + std::string(1, '\0') + tail;
    try {
      CheckHubDataset(path, {allowed});
      ADD_FAILURE() << "a path with a NUL byte was allowed";
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(e.what(), HasSubstr("NUL byte"));
      EXPECT_THAT(e.what(), HasSubstr(allowed));
    }
  }
  EXPECT_THROW(CheckHubDataset(std::string("fashion-mnist\0", 14), {}), std::runtime_error);
}

TEST(DirList, SplitsOnColonsAndSkipsEmptyParts) {
  EXPECT_TRUE(SplitDirList(nullptr).empty());
  EXPECT_TRUE(SplitDirList("").empty());
  EXPECT_EQ(SplitDirList("/a::/b c:"), (std::vector<std::string>{"/a", "/b c"}));
}

}  // namespace
}  // namespace mt
