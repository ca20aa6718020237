// What a user's own picture folder holds that mt leaves out is said
// (issue 44): files of formats mt does not read, counted by extension;
// every picture that does not decode, by name; and a class folder given as
// the dataset (its own pictures beside subfolders) is refused with the fix
// rather than trained on its subfolders as classes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/data/dataset.h"
#include "core/data/dataset_notes.h"
#include "core/data/image_folder.h"
#include "tests/support/image_writer.h"

namespace mt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

class ImageFolderNotesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mt-notes-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("MT_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Picture(const fs::path& p) {
    fs::create_directories(p.parent_path());
    test_support::WritePng(p, 8, 8, 1, std::vector<uint8_t>(64, 100));
  }
  static void Text(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }
  static DataOptions Options() {
    DataOptions o;
    o.input = Shape{1, 8, 8};
    o.test_fraction = 0;
    return o;
  }

  fs::path dir_;
};

TEST_F(ImageFolderNotesTest, UnsupportedFormatsAreCountedAndSaidInOneLine) {
  Picture(dir_ / "photos" / "cat" / "1.png");
  Picture(dir_ / "photos" / "dog" / "1.jpg.png");
  for (const char* name : {"cat/a.webp", "cat/b.WEBP", "dog/c.webp", "dog/d.gif"})
    Text(dir_ / "photos" / name, "RIFF....WEBP");
  const std::string photos = (dir_ / "photos").string();
  const DatasetInfo info = PeekDataset(photos, Split::kTrain, Options());
  EXPECT_EQ(info.size, 2u);
  EXPECT_THAT(DatasetNotes(photos, info),
              Contains(photos + ": skipped 1 .gif file and 3 .webp files: format not supported "
                                "(mt reads PNG and JPEG)"));
  EXPECT_EQ(UnsupportedFilesNote({}), "");
}

TEST_F(ImageFolderNotesTest, EverySkippedPictureIsNamed) {
  Picture(dir_ / "photos" / "cat" / "good.png");
  for (const char* name : {"cat/x.png", "cat/y.jpg", "cat/z.jpeg"})
    Text(dir_ / "photos" / name, "not a picture");
  DataOptions o = Options();
  o.skip_bad_images = true;
  const std::string photos = (dir_ / "photos").string();
  const DatasetInfo info = PeekDataset(photos, Split::kTrain, o);
  EXPECT_EQ(info.skipped, 3u);
  std::string said;
  for (const std::string& line : DatasetNotes(photos, info)) said += line + "\n";
  for (const char* name : {"cat/x.png", "cat/y.jpg", "cat/z.jpeg"})
    EXPECT_THAT(said, HasSubstr((dir_ / "photos" / name).string())) << said;
  EXPECT_THAT(said, HasSubstr("left out 3 picture(s)"));
}

// photos/bag holds its own pictures and subfolders day0..day2 of more: as
// a dataset it used to train on day0..day2 as three classes, silently.
TEST_F(ImageFolderNotesTest, AClassFolderGivenAsTheDatasetIsRefusedWithTheFix) {
  const fs::path bag = dir_ / "photos" / "bag";
  Picture(bag / "own1.png");
  Picture(bag / "own2.png");
  for (const char* day : {"day0", "day1", "day2"}) Picture(bag / day / "1.png");
  try {
    LoadDataset(bag.string(), Split::kTrain, Options());
    ADD_FAILURE() << "trained on day0..day2 as classes";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("holds 2 pictures of its own"), HasSubstr("day0, day1, day2"),
                      HasSubstr("--dataset " + (dir_ / "photos").string())));
  }
  // Given as the parent, bag is one class among the others.
  Picture(dir_ / "photos" / "shoe" / "1.png");
  const auto d = LoadDataset((dir_ / "photos").string(), Split::kTrain, Options());
  EXPECT_EQ(d->ClassNames(), (std::vector<std::string>{"bag", "shoe"}));
  EXPECT_EQ(d->Size(), 6u);
}

}  // namespace
}  // namespace mt
