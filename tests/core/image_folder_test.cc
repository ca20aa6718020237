// Image folders: PNG and JPEG decoding against the pixels the test wrote,
// the area resize, the hold-out split, the cache, and bad files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "core/data/dataset.h"
#include "core/data/image_cache.h"
#include "core/data/image_decode.h"
#include "core/data/image_folder.h"
#include "core/data/image_resize.h"
#include "tests/support/image_writer.h"
#include "train_state.pb.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using test_support::WriteJpeg;
using test_support::WritePng;
using ::testing::HasSubstr;

// Interleaved pixels with structure in every channel.
std::vector<uint8_t> Pattern(int w, int h, int c, int seed = 0) {
  std::vector<uint8_t> p(static_cast<size_t>(w) * h * c);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int ch = 0; ch < c; ++ch)
        p[(static_cast<size_t>(y) * w + x) * c + ch] =
            static_cast<uint8_t>((x * 7 + y * 13 + ch * 50 + seed * 31) % 256);
  return p;
}

// A smooth picture, which JPEG keeps within a few levels.
std::vector<uint8_t> Smooth(int w, int h, int c) {
  std::vector<uint8_t> p(static_cast<size_t>(w) * h * c);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int ch = 0; ch < c; ++ch)
        p[(static_cast<size_t>(y) * w + x) * c + ch] =
            static_cast<uint8_t>(128 + 100 * std::sin(0.05 * x + 0.07 * y + ch));
  return p;
}

// Reads a sample back to bytes.
std::vector<int> Bytes(const Dataset& d, size_t i) {
  std::vector<float> f(d.SampleShape().count());
  d.Get(i, f.data());
  std::vector<int> out;
  for (float v : f) out.push_back(static_cast<int>(std::lround((v - kPixelOffset) / kPixelScale)));
  return out;
}

// Planar (CHW) from interleaved.
std::vector<int> Planar(const std::vector<uint8_t>& p, int w, int h, int c) {
  std::vector<int> out(p.size());
  for (int ch = 0; ch < c; ++ch)
    for (int i = 0; i < w * h; ++i)
      out[static_cast<size_t>(ch) * w * h + i] = p[static_cast<size_t>(i) * c + ch];
  return out;
}

class ImageFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mt-images-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("MT_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Class(const std::string& split, const std::string& name) {
    const fs::path p = split.empty() ? dir_ / "data" / name : dir_ / "data" / split / name;
    fs::create_directories(p);
    return p;
  }
  static DataOptions Options(int c, int h, int w) {
    DataOptions o;
    o.input = Shape{c, h, w};
    return o;
  }
  std::string data() const { return (dir_ / "data").string(); }

  fs::path dir_;
};

TEST_F(ImageFolderTest, PngIsReadExactlyGreyColourAlphaAndInterlaced) {
  const auto grey = Pattern(29, 31, 1), rgb = Pattern(29, 31, 3, 1), rgba = Pattern(29, 31, 4, 2);
  WritePng(Class("train", "a") / "grey.png", 29, 31, 1, grey);
  WritePng(Class("train", "b") / "rgb.png", 29, 31, 3, rgb);
  WritePng(Class("train", "c") / "rgba.png", 29, 31, 4, rgba);
  WritePng(Class("train", "d") / "interlaced.png", 29, 31, 3, rgb, /*interlaced=*/true);
  WritePng(Class("test", "a") / "t.png", 29, 31, 1, grey);
  const auto d = LoadDataset(data(), Split::kTrain, Options(3, 31, 29));
  ASSERT_EQ(d->Size(), 4u);
  EXPECT_EQ(d->SampleShape(), (Shape{3, 31, 29}));
  EXPECT_EQ(d->ClassNames(), (std::vector<std::string>{"a", "b", "c", "d"}));
  // Grey becomes three equal planes.
  const auto g = Planar(grey, 29, 31, 1);
  std::vector<int> grey3 = g;
  grey3.insert(grey3.end(), g.begin(), g.end());
  grey3.insert(grey3.end(), g.begin(), g.end());
  EXPECT_EQ(Bytes(*d, 0), grey3);
  EXPECT_EQ(d->Label(0), 0);
  EXPECT_EQ(Bytes(*d, 1), Planar(rgb, 29, 31, 3));
  std::vector<uint8_t> rgb_of_rgba;
  for (size_t i = 0; i < rgba.size(); ++i)
    if (i % 4 != 3) rgb_of_rgba.push_back(rgba[i]);
  EXPECT_EQ(Bytes(*d, 2), Planar(rgb_of_rgba, 29, 31, 3));
  EXPECT_EQ(Bytes(*d, 3), Planar(rgb, 29, 31, 3));
  EXPECT_EQ(d->Label(3), 3);
  EXPECT_EQ(LoadDataset(data(), Split::kTest, Options(3, 31, 29))->Size(), 1u);
}

TEST_F(ImageFolderTest, ColourBecomesGreyByLuminance) {
  std::vector<uint8_t> rgb(16 * 16 * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) rgb[i] = 200, rgb[i + 1] = 100, rgb[i + 2] = 50;
  WritePng(Class("", "a") / "x.png", 16, 16, 3, rgb);
  DataOptions o = Options(1, 16, 16);
  o.test_fraction = 0;
  const auto d = LoadDataset(data(), Split::kTrain, o);
  const double luma = 0.2126 * 200 + 0.7152 * 100 + 0.0722 * 50;
  for (int v : Bytes(*d, 0)) EXPECT_NEAR(v, luma, 2.0);
}

TEST_F(ImageFolderTest, SamplesAreScaledAsTheModelSays) {
  const auto rgb = Pattern(8, 8, 3, 4);
  WritePng(Class("", "a") / "x.png", 8, 8, 3, rgb);
  DataOptions o = Options(3, 8, 8);
  o.test_fraction = 0;
  const std::vector<float> mean = {0.485f, 0.456f, 0.406f}, std = {0.229f, 0.224f, 0.225f};
  o.scaling = PixelScaling::FromMeanStd(mean, std, 3);
  const auto d = LoadDataset(data(), Split::kTrain, o);
  std::vector<float> f(d->SampleShape().count());
  d->Get(0, f.data());
  const auto planar = Planar(rgb, 8, 8, 3);
  for (size_t i = 0; i < f.size(); ++i) {
    const size_t c = i / 64;
    ASSERT_NEAR(f[i], (planar[i] / 255.0 - mean[c]) / std[c], 1e-5) << i;
  }
  EXPECT_THROW(PixelScaling::FromMeanStd({0.5f, 0.5f}, {0.5f}, 3), std::invalid_argument);
  EXPECT_THROW(PixelScaling::FromMeanStd({0.5f}, {0.0f}, 3), std::invalid_argument);
}

TEST_F(ImageFolderTest, JpegIsWithinAFewLevelsOfTheOriginal) {
  const auto rgb = Smooth(40, 24, 3), grey = Smooth(40, 24, 1);
  WriteJpeg(Class("", "a") / "c.jpg", 40, 24, 3, rgb);
  WriteJpeg(Class("", "b") / "g.JPEG", 40, 24, 1, grey);
  DataOptions o = Options(3, 24, 40);
  o.test_fraction = 0;
  const auto d = LoadDataset(data(), Split::kTrain, o);
  ASSERT_EQ(d->Size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const auto want = i == 0 ? Planar(rgb, 40, 24, 3) : [&] {
      auto g = Planar(grey, 40, 24, 1);
      auto g3 = g;
      g3.insert(g3.end(), g.begin(), g.end());
      g3.insert(g3.end(), g.begin(), g.end());
      return g3;
    }();
    const auto got = Bytes(*d, static_cast<size_t>(i));
    double err = 0;
    for (size_t k = 0; k < got.size(); ++k) err += std::abs(got[k] - want[k]);
    EXPECT_LT(err / got.size(), 3.0) << "sample " << i;
  }
}

TEST(AreaResize, AveragesBlocksKeepsConstantsAndStreamsLargePictures) {
  // 4x4 -> 2x2: each output is its 2x2 block's mean.
  const std::vector<uint8_t> in = {0,  10, 20,  30,  40,  50,  60,  70,
                                   80, 90, 100, 110, 120, 130, 140, 150};
  AreaResizer r(2, 2, 1);
  r.Begin(4, 4, 1);
  for (int y = 0; y < 4; ++y) r.Row(in.data() + 4 * y);
  uint8_t out[4];
  r.Finish(out);
  EXPECT_EQ(std::vector<int>(out, out + 4), (std::vector<int>{25, 45, 105, 125}));
  // Odd factors both ways leave a constant picture constant.
  const std::vector<uint8_t> flat(13 * 3, 77);
  for (auto [w, h] : {std::pair{5, 7}, std::pair{32, 29}}) {
    AreaResizer s(w, h, 3);
    s.Begin(13, 11, 1);
    for (int y = 0; y < 11; ++y) s.Row(flat.data());
    std::vector<uint8_t> o(static_cast<size_t>(w) * h * 3);
    s.Finish(o.data());
    for (uint8_t v : o) ASSERT_EQ(v, 77);
  }
}

TEST_F(ImageFolderTest, LargePhotoShrinksToTheAreaAverage) {
  // A 1600x1200 JPEG (decoded at 1/8 by libjpeg) and a PNG of it, to 3x32x32:
  // both near the exact area average of the original.
  const int w = 1600, h = 1200;
  const auto big = Smooth(w, h, 3);
  WriteJpeg(Class("", "a") / "big.jpg", w, h, 3, big, 98);
  WritePng(Class("", "b") / "big.png", w, h, 3, big);
  AreaResizer exact(32, 32, 3);
  exact.Begin(w, h, 1);
  for (int y = 0; y < h; ++y) exact.Row(big.data() + static_cast<size_t>(y) * w * 3);
  std::vector<uint8_t> want(3 * 32 * 32);
  exact.Finish(want.data());
  DataOptions o = Options(3, 32, 32);
  o.test_fraction = 0;
  const auto d = LoadDataset(data(), Split::kTrain, o);
  for (size_t i = 0; i < 2; ++i) {
    const auto got = Bytes(*d, i);
    double err = 0;
    for (size_t k = 0; k < got.size(); ++k) err += std::abs(got[k] - want[k]);
    EXPECT_LT(err / got.size(), i == 0 ? 3.0 : 0.01) << "sample " << i;
  }
}

TEST_F(ImageFolderTest, PhotosAreTurnedAsTheirExifOrientationSays) {
  // Stored 40 wide and 24 high, four flat quadrants; each orientation must
  // show it turned or mirrored as EXIF defines.
  const int w = 40, h = 24;
  std::vector<uint8_t> stored(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      stored[static_cast<size_t>(y) * w + x] =
          static_cast<uint8_t>(30 + 60 * (x >= w / 2) + 120 * (y >= h / 2));
  for (int o = 1; o <= 8; ++o) {
    const fs::path dir = dir_ / ("o" + std::to_string(o));
    fs::create_directories(dir / "a");
    test_support::WriteJpeg(dir / "a" / "x.jpg", w, h, 1, stored, 95, o);
    const bool turned = o >= 5;
    const int sw = turned ? h : w, sh = turned ? w : h;  // shown
    DataOptions opt = Options(1, sh, sw);
    opt.test_fraction = 0;
    const auto d = LoadDataset(dir.string(), Split::kTrain, opt);
    const auto got = Bytes(*d, 0);
    double err = 0;
    for (int y = 0; y < sh; ++y)
      for (int x = 0; x < sw; ++x) {
        const int tx[9] = {0, x, w - 1 - x, w - 1 - x, x, y, y, w - 1 - y, w - 1 - y};
        const int ty[9] = {0, y, y, h - 1 - y, h - 1 - y, x, h - 1 - x, h - 1 - x, x};
        err += std::abs(got[static_cast<size_t>(y) * sw + x] -
                        stored[static_cast<size_t>(ty[o]) * w + tx[o]]);
      }
    EXPECT_LT(err / (sw * sh), 4.0) << "orientation " << o;
  }
}

TEST_F(ImageFolderTest, HoldOutIsDisjointStableAndNearTheFraction) {
  for (int i = 0; i < 200; ++i)
    WritePng(Class("", i % 2 ? "cat" : "dog") / ("p" + std::to_string(i) + ".png"), 8, 8, 1,
             Pattern(8, 8, 1, i));
  DataOptions o = Options(1, 8, 8);
  o.test_fraction = 0.25;
  const auto train = LoadDataset(data(), Split::kTrain, o);
  const auto test = LoadDataset(data(), Split::kTest, o);
  EXPECT_EQ(train->Size() + test->Size(), 200u);
  EXPECT_NEAR(static_cast<double>(test->Size()), 50.0, 20.0);
  std::set<std::vector<int>> seen;
  for (size_t i = 0; i < train->Size(); ++i) seen.insert(Bytes(*train, i));
  for (size_t i = 0; i < test->Size(); ++i) EXPECT_EQ(seen.count(Bytes(*test, i)), 0u);
  // The default holds out kDefaultTestFraction; the same files every time.
  const auto a = ListImageFolder(data(), Split::kTest, -1);
  const auto b = ListImageFolder(data(), Split::kTest, -1);
  ASSERT_EQ(a.files.size(), b.files.size());
  EXPECT_GT(a.files.size(), 5u);
  EXPECT_LT(a.files.size(), 40u);
  for (size_t i = 0; i < a.files.size(); ++i) EXPECT_EQ(a.files[i].path, b.files[i].path);
  EXPECT_EQ(PeekDataset(data(), Split::kTrain, o).class_names,
            (std::vector<std::string>{"cat", "dog"}));
}

TEST_F(ImageFolderTest, CacheIsReusedUntilAFileChanges) {
  const fs::path file = Class("", "a") / "x.png";
  WritePng(file, 8, 8, 1, Pattern(8, 8, 1, 1));
  WritePng(Class("", "b") / "y.png", 8, 8, 1, Pattern(8, 8, 1, 2));
  DataOptions o = Options(1, 8, 8);
  o.test_fraction = 0;
  size_t decoded = 0;
  o.progress = [&](size_t done, size_t) { decoded = done; };
  const auto first = Bytes(*LoadDataset(data(), Split::kTrain, o), 0);
  EXPECT_EQ(decoded, 2u);
  decoded = 0;
  EXPECT_EQ(LoadDataset(data(), Split::kTrain, o)->HeldBytes(), 2 * sizeof(uint16_t));
  EXPECT_EQ(decoded, 0u);  // nothing decoded the second time
  // New pixels under the old size and time: the cache cannot tell, and
  // serves what it decoded before, so nothing was decoded again.
  const auto when = fs::last_write_time(file);
  const auto size = fs::file_size(file);
  decoded = 0;
  auto other = Pattern(8, 8, 1, 9);
  WritePng(file, 8, 8, 1, other);
  fs::last_write_time(file, when);
  if (fs::file_size(file) == size) {
    EXPECT_EQ(Bytes(*LoadDataset(data(), Split::kTrain, o), 0), first);
    EXPECT_EQ(decoded, 0u);
  }
  // A newer time: decoded again.
  fs::last_write_time(file, when + std::chrono::seconds(5));
  EXPECT_EQ(Bytes(*LoadDataset(data(), Split::kTrain, o), 0), Planar(other, 8, 8, 1));
  EXPECT_EQ(decoded, 2u);
  // Another input size is another cache.
  EXPECT_EQ(LoadDataset(data(), Split::kTrain, Options(1, 16, 16))->SampleShape(),
            (Shape{1, 16, 16}));
}

// Rewrites the one cache file in `dir` with another sample shape (and as
// many pixel bytes as that shape needs), keeping its fingerprint and MAC.
void ReshapeCache(const fs::path& dir, int channels, int height, int width) {
  std::vector<fs::path> caches;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".mtimg") caches.push_back(e.path());
  ASSERT_EQ(caches.size(), 1u);
  std::ifstream in(caches[0], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t tail = 8 + 32 + 8;  // length, MAC, magic
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i)
    header_len = header_len << 8 | static_cast<uint8_t>(bytes[bytes.size() - tail + i]);
  proto::ImageCache header;
  ASSERT_TRUE(header.ParseFromString(bytes.substr(bytes.size() - tail - header_len, header_len)));
  header.set_channels(channels);
  header.set_height(height);
  header.set_width(width);
  const std::string head = header.SerializeAsString();
  std::string out = bytes.substr(0, 8);
  out += std::string(static_cast<size_t>(channels) * height * width * header.labels_size(), 'x');
  out += head;
  for (int i = 0; i < 8; ++i) out += static_cast<char>(head.size() >> (8 * i));
  out += bytes.substr(bytes.size() - 40);  // the old MAC and the magic
  std::ofstream(caches[0], std::ios::binary | std::ios::trunc) << out;
}

// A cache altered in place to a 1x1 shape with its fingerprint kept was
// once served as it was, and a hub then read past its buffers; another
// shape than the one asked for, or one no model takes, makes it stale.
TEST_F(ImageFolderTest, ACacheOfAnotherShapeIsRebuilt) {
  WritePng(Class("", "a") / "x.png", 8, 8, 1, Pattern(8, 8, 1, 1));
  WritePng(Class("", "b") / "y.png", 8, 8, 1, Pattern(8, 8, 1, 2));
  DataOptions o = Options(1, 8, 8);
  o.test_fraction = 0;
  const auto first = Bytes(*LoadDataset(data(), Split::kTrain, o), 0);
  for (const Shape& tampered : {Shape{1, 1, 1}, Shape{4, 1, 1}, Shape{-1, -1, 1}}) {
    ReshapeCache(dir_ / "cache", tampered[0], tampered[1], tampered[2]);
    size_t decoded = 0;
    o.progress = [&](size_t done, size_t) { decoded = done; };
    const auto reopened = LoadDataset(data(), Split::kTrain, o);
    EXPECT_EQ(reopened->SampleShape(), (Shape{1, 8, 8})) << tampered.ToString();
    EXPECT_EQ(Bytes(*reopened, 0), first) << tampered.ToString();
    EXPECT_EQ(decoded, 2u) << tampered.ToString() << ": not rebuilt";
  }
}

TEST_F(ImageFolderTest, ConcurrentOpenersShareOneBuild) {
  for (int i = 0; i < 40; ++i)
    WritePng(Class("", "c" + std::to_string(i % 4)) / (std::to_string(i) + ".png"), 24, 24, 3,
             Pattern(24, 24, 3, i));
  DataOptions o = Options(3, 16, 16);
  o.test_fraction = 0;
  std::vector<std::vector<int>> firsts(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      firsts[static_cast<size_t>(t)] = Bytes(*LoadDataset(data(), Split::kTrain, o), 7);
    });
  for (auto& th : threads) th.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(firsts[static_cast<size_t>(t)], firsts[0]);
  size_t caches = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "cache"))
    caches += e.path().extension() == ".mtimg";
  EXPECT_EQ(caches, 1u);
}

void WriteBytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}
std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(ImageFolderTest, BadFilesAreNamedOrSkippedWithACount) {
  const fs::path a = Class("", "a");
  WritePng(a / "good.png", 16, 16, 1, Pattern(16, 16, 1));
  WritePng(dir_ / "full.png", 16, 16, 1, Pattern(16, 16, 1));
  WriteJpeg(dir_ / "full.jpg", 64, 64, 3, Smooth(64, 64, 3));
  const std::string png = ReadBytes(dir_ / "full.png"), jpg = ReadBytes(dir_ / "full.jpg");
  struct Bad {
    std::string name, bytes, why;
  };
  std::vector<Bad> bad = {
      {"truncated.png", png.substr(0, png.size() / 2), ""},
      {"truncated.jpg", jpg.substr(0, jpg.size() / 2), "truncated"},
      {"text.png", "hello, not a picture", "neither a PNG nor a JPEG"},
      {"empty.jpeg", "", "empty file"},
  };
  WritePng(dir_ / "tiny.png", 1, 1, 1, {7});
  bad.push_back({"tiny.png", ReadBytes(dir_ / "tiny.png"), "too small"});
  // A header claiming 10000 x 10000: refused before any pixel is decoded.
  std::string huge = png;
  const uint8_t side[4] = {0, 0, 0x27, 0x10};
  huge.replace(16, 4, reinterpret_cast<const char*>(side), 4);
  huge.replace(20, 4, reinterpret_cast<const char*>(side), 4);
  const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(huge.data() + 12), 17);
  for (int i = 0; i < 4; ++i) huge[29 + i] = static_cast<char>(crc >> (24 - 8 * i));
  bad.push_back({"huge.png", huge, "megapixels"});
  DataOptions o = Options(1, 16, 16);
  o.test_fraction = 0;
  for (const Bad& b : bad) {
    const fs::path p = a / b.name;
    WriteBytes(p, b.bytes);
    try {
      LoadDataset(data(), Split::kTrain, o);
      ADD_FAILURE() << b.name << " was accepted";
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr(p.string())) << b.name;
      EXPECT_THAT(e.what(), HasSubstr(b.why)) << b.name;
    }
    fs::remove(p);
  }
  for (const Bad& b : bad) WriteBytes(a / b.name, b.bytes);
  o.skip_bad_images = true;
  const auto d = LoadDataset(data(), Split::kTrain, o);
  EXPECT_EQ(d->Size(), 1u);
  EXPECT_EQ(Bytes(*d, 0), Planar(Pattern(16, 16, 1), 16, 16, 1));
}

TEST_F(ImageFolderTest, FoldersWithDifferentClassesAreLabelledAsTheModelNamesThem) {
  // Two phones: one has cats and dogs, the other dogs and fish.
  for (const auto& [phone, classes] : {std::pair{"a", std::vector<std::string>{"cat", "dog"}},
                                       std::pair{"b", std::vector<std::string>{"dog", "fish"}}})
    for (const std::string& c : classes) {
      fs::create_directories(dir_ / phone / c);
      WritePng(dir_ / phone / c / "1.png", 8, 8, 1, Pattern(8, 8, 1));
    }
  DataOptions o = Options(1, 8, 8);
  o.test_fraction = 0;
  o.class_names = {"cat", "dog", "fish"};
  const auto a = LoadDataset((dir_ / "a").string(), Split::kTrain, o);
  const auto b = LoadDataset((dir_ / "b").string(), Split::kTrain, o);
  EXPECT_EQ(a->Label(0), 0);
  EXPECT_EQ(a->Label(1), 1);
  EXPECT_EQ(b->Label(0), 1);  // dog is 1 on both
  EXPECT_EQ(b->Label(1), 2);
  EXPECT_EQ(b->NumClasses(), 3);
  // Without the model's names each folder counts from 0: dog would be 0 on b.
  o.class_names.clear();
  EXPECT_EQ(LoadDataset((dir_ / "b").string(), Split::kTrain, o)->Label(0), 0);
  // A class the model has no output for is refused by name.
  fs::create_directories(dir_ / "b" / "bird");
  WritePng(dir_ / "b" / "bird" / "1.png", 8, 8, 1, Pattern(8, 8, 1));
  o.class_names = {"cat", "dog", "fish"};
  try {
    LoadDataset((dir_ / "b").string(), Split::kTrain, o);
    ADD_FAILURE() << "bird was accepted";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'bird' is not one the model was trained for"));
  }
}

TEST_F(ImageFolderTest, FolderMistakesAreClearErrors) {
  fs::create_directories(dir_ / "data" / "train");
  DataOptions o = Options(1, 8, 8);
  EXPECT_THROW(ListImageFolder(data(), Split::kTrain, -1), DataError);  // no classes
  WritePng(Class("train", "a") / "x.png", 8, 8, 1, Pattern(8, 8, 1));
  Class("train", "empty");
  try {
    ListImageFolder(data(), Split::kTrain, -1);
    ADD_FAILURE() << "an empty class was accepted";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("empty"));
  }
  fs::remove(dir_ / "data" / "train" / "empty");
  WritePng(Class("test", "z") / "x.png", 8, 8, 1, Pattern(8, 8, 1));
  EXPECT_THROW(ListImageFolder(data(), Split::kTest, -1), DataError);  // a class train lacks
  fs::remove_all(dir_ / "data" / "test" / "z");
  WritePng(Class("test", "a") / "x.png", 8, 8, 1, Pattern(8, 8, 1));
  EXPECT_THROW(ListImageFolder(data(), Split::kTrain, 0.2), DataError);  // fraction and test/
  o.input = Shape{4, 8, 8};
  EXPECT_THROW(LoadDataset(data(), Split::kTrain, o), DataError);  // 4 channels
}

}  // namespace
}  // namespace mt
