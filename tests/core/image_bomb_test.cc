// Decompression bombs (issue 45, finding 2): image files whose headers
// claim far more than their bytes hold. Each must be refused, naming the
// file, before the decoder spends memory or time on the claim; and a
// folder of 100 of them must cost a real process little.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/data/dataset.h"
#include "core/data/image_decode.h"
#include "core/data/image_resize.h"
#include "tests/support/hostile_images.h"
#include "tests/support/image_writer.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ImageBombTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mt-bombs-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "data" / "a");
    setenv("MT_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Put(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / "data" / "a" / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  // Decodes `path` to 1x32x32; the DataError's message, or "" if it decoded.
  static std::string Refusal(const fs::path& path) {
    AreaResizer resizer(32, 32, 1);
    try {
      DecodeImage(path.string(), 1, 32, 32, resizer);
    } catch (const DataError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

// A 565-byte progressive JPEG claiming 8000x8000 was decoded as a grey
// picture (386 MB for its coefficients) and trained on; refused now from
// its size, before anything is allocated. Its baseline twin, and a PNG
// claiming as much, the same.
TEST_F(ImageBombTest, HeadersClaimingMoreThanTheBytesHoldAreRefused) {
  const std::string bomb = test_support::JpegBomb(8000, 8000);
  EXPECT_LT(bomb.size(), 1000u);
  for (const auto& [name, bytes] :
       {std::pair{"progressive.jpg", bomb},
        std::pair{"baseline.jpg", test_support::JpegBomb(8000, 8000, false)},
        std::pair{"interlaced.png", test_support::PngBomb(8000, 8000)},
        std::pair{"plain.png", test_support::PngBomb(8000, 8000, false)}}) {
    const fs::path p = Put(name, bytes);
    const std::string why = Refusal(p);
    EXPECT_THAT(why, HasSubstr(p.string())) << name;
    EXPECT_THAT(why, HasSubstr("truncated, or a decompression bomb")) << name;
  }
}

// Padded with comments to the size a whole 2000x2000 picture needs, the
// same coded data runs out in the first scan: libjpeg only warned
// ("premature end of data segment") and finished the picture in grey.
TEST_F(ImageBombTest, DataThatRunsOutInsideAScanIsAnError) {
  const fs::path p = Put("padded.jpg", test_support::PaddedJpegBomb(2000, 2000, 20'000));
  const std::string why = Refusal(p);
  EXPECT_THAT(why, HasSubstr(p.string()));
  EXPECT_THAT(why, HasSubstr("Corrupt JPEG data"));
}

// Each scan is a pass over every block; 127 of them is no encoder's
// script, while libjpeg's own progressive (10 scans) still decodes.
TEST_F(ImageBombTest, AProgressiveJpegOfTooManyScansIsRefused) {
  const fs::path many = Put("many.jpg", test_support::ManyScanJpeg(64, 64));
  EXPECT_THAT(Refusal(many), HasSubstr("more than 100 scans"));
  const fs::path usual = dir_ / "usual.jpg";
  std::vector<uint8_t> grey(64 * 64, 100);
  test_support::WriteJpeg(usual, 64, 64, 1, grey);
  EXPECT_EQ(Refusal(usual), "");
  const fs::path progressive = Put("progressive.jpg", test_support::JpegBomb(16, 16));
  EXPECT_EQ(Refusal(progressive), "");
}

// Issue 45's figure: 100 bombs of ~565 bytes cost 755 MB and 26 s. A
// child process reads a folder of them and one good picture, as a hub
// does (decoding one file per core, --skip-bad-images); its peak RSS and
// time are the kernel's figures.
TEST_F(ImageBombTest, AFolderOfBombsCostsLittle) {
  for (int i = 0; i < 100; ++i) {
    Put("bomb" + std::to_string(i) + ".jpg", test_support::JpegBomb(8000, 8000));
    Put("bomb" + std::to_string(i) + ".png", test_support::PngBomb(8000, 8000));
  }
  test_support::WritePng(dir_ / "data" / "a" / "good.png", 16, 16, 1,
                         std::vector<uint8_t>(256, 50));
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    DataOptions o;
    o.input = Shape{1, 32, 32};
    o.test_fraction = 0;
    o.skip_bad_images = true;
    try {
      const DatasetInfo info = PeekDataset((dir_ / "data").string(), Split::kTrain, o);
      _exit(info.size == 1 && info.skipped == 200 ? 0 : 1);
    } catch (...) {
      _exit(2);
    }
  }
  int status = 0;
  rusage usage{};
  ASSERT_EQ(wait4(child, &status, 0, &usage), child);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double peak_mb = usage.ru_maxrss / 1024.0;
  std::printf("100 JPEG and 100 PNG bombs: peak RSS %.0f MB, %.2f s\n", peak_mb, seconds);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "not every bomb refused and the good picture kept";
  EXPECT_LT(peak_mb, 300.0);
  EXPECT_LT(seconds, 30.0);
}

}  // namespace
}  // namespace mt
