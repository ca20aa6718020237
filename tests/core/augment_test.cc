// Augmentation: what a shift and a mirror do to known pixels, that the same
// key gives the same variant, and that --augment parses as documented.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/data/augment.h"
#include "core/data/dataset.h"

namespace mt {
namespace {

std::vector<float> Ramp(const Shape& s) {
  std::vector<float> v(s.count());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(Augment, EachVariantIsAShiftWithBlackBorderAndMaybeAMirror) {
  const Shape s{2, 6, 5};
  const Augmentation a{true, 2};
  // Black is pixel 0 as the model scales it, per channel.
  const PixelScaling scaling = PixelScaling::FromMeanStd({0.2f, 0.4f}, {0.5f, 0.25f}, 2);
  std::set<std::vector<float>> variants;
  for (uint64_t key = 0; key < 400; ++key) {
    std::vector<float> v = Ramp(s);
    Augment(a, s, key, scaling, v.data());
    variants.insert(v);
    // Find the shift and mirror that explain every pixel.
    bool explained = false;
    for (int flip = 0; flip < 2 && !explained; ++flip)
      for (int dy = -2; dy <= 2 && !explained; ++dy)
        for (int dx = -2; dx <= 2 && !explained; ++dx) {
          bool ok = true;
          for (int c = 0; c < 2 && ok; ++c)
            for (int y = 0; y < 6 && ok; ++y)
              for (int x = 0; x < 5 && ok; ++x) {
                const int xs = (flip ? 4 - x : x) + dx, ys = y + dy;
                const float want = xs < 0 || xs >= 5 || ys < 0 || ys >= 6
                                       ? scaling.offset[c]
                                       : static_cast<float>(c * 30 + ys * 5 + xs);
                ok = v[static_cast<size_t>(c * 30 + y * 5 + x)] == want;
              }
          explained = ok;
        }
    ASSERT_TRUE(explained) << "key " << key;
  }
  EXPECT_EQ(variants.size(), 50u);  // 5 x 5 shifts, mirrored or not: all drawn
}

TEST(Augment, TheSameKeyGivesTheSameVariant) {
  const Shape s{3, 8, 8};
  const Augmentation a{true, 1};
  for (uint64_t key : {1ull, 99ull, 123456789ull}) {
    std::vector<float> x = Ramp(s), y = Ramp(s);
    Augment(a, s, key, PixelScaling{}, x.data());
    Augment(a, s, key, PixelScaling{}, y.data());
    EXPECT_EQ(x, y);
  }
  std::vector<float> untouched = Ramp(s);
  Augment(Augmentation{}, s, 5, PixelScaling{}, untouched.data());
  EXPECT_EQ(untouched, Ramp(s));
}

TEST(Augment, ChoicesParseAndResolveByTheKindOfData) {
  const Shape s{3, 32, 32};
  EXPECT_EQ(ResolveAugment(ParseAugment("auto"), s, true).ToString(), "flip, crop 4");
  EXPECT_EQ(ResolveAugment(ParseAugment("auto"), s, false).ToString(), "none");
  EXPECT_EQ(ResolveAugment(ParseAugment("none"), s, true).ToString(), "none");
  EXPECT_EQ(ResolveAugment(ParseAugment("flip"), s, false).ToString(), "flip");
  EXPECT_EQ(ResolveAugment(ParseAugment("crop"), Shape{1, 28, 28}, true).ToString(), "crop 3");
  EXPECT_EQ(ResolveAugment(ParseAugment("flip,crop"), s, false).ToString(), "flip, crop 4");
  for (const char* bad : {"", "flipp", "flip,", "crop;flip", "auto,flip"})
    EXPECT_THROW(ParseAugment(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace mt
