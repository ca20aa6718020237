// The image cache as untrusted input (issue 45, findings 3 and 4): a cache
// altered in place is rebuilt, links planted where the cache writes are
// never written through, a lock held by a stuck process ends in an error
// naming it, and a hub that asks for a new hold-out on every Join cannot
// fill the disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/data/cache_files.h"
#include "core/data/dataset.h"
#include "tests/support/image_writer.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<fs::path> Caches(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".mtimg") out.push_back(e.path());
  return out;
}

class ImageCacheSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mt-cache-sec-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    cache_ = dir_ / "cache";
    setenv("MT_CACHE_DIR", cache_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("MT_CACHE_MAX_MB");
    fs::remove_all(dir_);
  }

  // Folder `name` with classes a and b, two 8x8 grey pictures each.
  std::string Folder(const std::string& name = "data") {
    for (int i = 0; i < 4; ++i) {
      const fs::path c = dir_ / name / (i < 2 ? "a" : "b");
      fs::create_directories(c);
      test_support::WritePng(c / (std::to_string(i) + ".png"), 8, 8, 1,
                             std::vector<uint8_t>(64, static_cast<uint8_t>(40 * i + 10)));
    }
    return (dir_ / name).string();
  }
  DataOptions Options(double test_fraction = 0) {
    DataOptions o;
    o.input = Shape{1, 8, 8};
    o.test_fraction = test_fraction;
    o.progress = [this](size_t done, size_t) { decoded_ = done; };
    return o;
  }

  fs::path dir_, cache_;
  size_t decoded_ = 0;
};

// Issue 45: every label set to class 0, the fingerprint kept, was used
// silently (accuracy 0.273 -> 0.091). Relabelled, or with a picture
// repainted, a cache is now rebuilt from the pictures.
TEST_F(ImageCacheSecurityTest, ACacheAlteredInPlaceIsRebuilt) {
  const std::string data = Folder();
  {
    const auto d = LoadDataset(data, Split::kTrain, Options());
    ASSERT_EQ(d->Size(), 4u);
  }
  ASSERT_EQ(Caches(cache_).size(), 1u);
  const fs::path cache = Caches(cache_)[0];
  const std::string original = ReadBytes(cache);
  // The labels 0, 0, 1, 1: a packed repeated field 6 of four one-byte values.
  const std::string labels("\x32\x04\x00\x00\x01\x01", 6);
  const size_t at = original.rfind(labels);
  ASSERT_NE(at, std::string::npos);
  for (const bool relabel : {true, false}) {
    std::string tampered = original;
    if (relabel)
      tampered[at + 4] = tampered[at + 5] = 0;  // every sample class 0
    else
      tampered[8] = static_cast<char>(tampered[8] ^ 0x80);  // the first sample's first pixel
    std::ofstream(cache, std::ios::binary | std::ios::trunc) << tampered;
    decoded_ = 0;
    const auto d = LoadDataset(data, Split::kTrain, Options());
    EXPECT_EQ(decoded_, 4u) << (relabel ? "relabelled" : "repainted") << ": used as it was";
    EXPECT_EQ(d->Label(2), 1);
    std::vector<float> pixels(64);
    d->Get(0, pixels.data());
    EXPECT_NEAR((pixels[0] - kPixelOffset) / kPixelScale, 10.0, 0.01);
  }
}

// Issue 45: temporaries at NAME.tmp.PID were opened with fopen("wb"), so a
// link planted there overwrote its target, and the cache became a link to
// it. Now the directory is private, temporaries have unpredictable names
// and are made with O_EXCL|O_NOFOLLOW, and a link at the final name is
// replaced, not written through.
TEST_F(ImageCacheSecurityTest, LinksPlantedInTheCacheAreNotWrittenThrough) {
  const std::string data = Folder();
  LoadDataset(data, Split::kTrain, Options());
  const fs::path cache = Caches(cache_).at(0);
  struct stat st {};
  ASSERT_EQ(stat(cache_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  fs::remove(cache);
  const fs::path victim = dir_ / "victim", other = dir_ / "other";
  std::ofstream(victim) << "precious";
  std::ofstream(other) << "also precious";
  fs::create_symlink(victim, cache.string() + ".tmp." + std::to_string(getpid()));
  fs::create_symlink(other, cache);
  const auto d = LoadDataset(data, Split::kTrain, Options());
  EXPECT_EQ(d->Label(3), 1);
  EXPECT_EQ(ReadBytes(victim), "precious");
  EXPECT_EQ(ReadBytes(other), "also precious");
  EXPECT_EQ(fs::symlink_status(cache).type(), fs::file_type::regular);
}

// Issue 45: a lock held through a read-only descriptor blocked startup
// with no message. A holder that shows no progress now ends the wait with
// an error naming the lock; one that does (the process building the
// cache) is waited for.
TEST_F(ImageCacheSecurityTest, AStuckLockEndsInAnErrorAWorkingOneIsWaitedFor) {
  fs::create_directories(cache_);
  const std::string path = (cache_ / "train-x.lock").string();
  std::ofstream(path) << "";
  const int held = open(path.c_str(), O_RDONLY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  const auto start = std::chrono::steady_clock::now();
  try {
    CacheLock lock(path, std::chrono::seconds(1));
    ADD_FAILURE() << "the lock was taken while held";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Now the holder works for 2.5 s, touching the file as a build does.
  std::thread holder([&] {
    for (int i = 0; i < 10; ++i) {
      futimens(held, nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    flock(held, LOCK_UN);
  });
  EXPECT_NO_THROW({ CacheLock lock(path, std::chrono::seconds(1)); });
  holder.join();
  close(held);
}

// Issue 45: a hub naming a new test fraction on every Join left a new
// cache file each time (7 files, 477 MB in 60 s). A folder and split keep
// their two most recent; the directory stays within its cap; temporaries
// left by a crash go.
TEST_F(ImageCacheSecurityTest, ANewHoldOutOnEveryJoinCannotFillTheDisk) {
  const std::string data = Folder();
  for (int i = 1; i <= 10; ++i) {
    const auto d = LoadDataset(data, Split::kTrain, Options(0.01 * i));
    EXPECT_GE(d->Size(), 1u);
    EXPECT_LE(Caches(cache_).size(), 2u) << "after " << i << " hold-outs";
  }
  const fs::path stale = cache_ / "train-0-0.mtimg.tmp-0123456789abcdef";
  std::ofstream(stale) << "half a cache";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  // A cap of 0: only the cache just built stays.
  setenv("MT_CACHE_MAX_MB", "0", 1);
  const std::string other = Folder("other");
  EXPECT_EQ(LoadDataset(other, Split::kTrain, Options())->Size(), 4u);
  EXPECT_EQ(Caches(cache_).size(), 1u);
  EXPECT_FALSE(fs::exists(stale));
  // The evicted folder is decoded again when asked for.
  decoded_ = 0;
  EXPECT_EQ(LoadDataset(data, Split::kTrain, Options())->Label(3), 1);
  EXPECT_EQ(decoded_, 4u);
}

}  // namespace
}  // namespace mt
