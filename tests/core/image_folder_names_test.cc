// What an image folder's listing takes and says (issue 45, findings 5 and
// 6; issue 44): names that are not UTF-8 work as the file system has them;
// symbolic links are skipped and counted, never followed out of the
// dataset; files of formats mt does not read are counted by extension;
// every picture that does not decode is named; and a class folder given as
// the dataset (its own pictures beside subfolders) is refused with the fix
// rather than trained on its subfolders as classes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

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

class ImageFolderNamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mt-names-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("MT_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Picture(const fs::path& p, uint8_t value) {
    fs::create_directories(p.parent_path());
    test_support::WritePng(p, 8, 8, 1, std::vector<uint8_t>(64, value));
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

// Issue 45: a class folder or file name that is not UTF-8 (Latin-1 "café",
// a stray 0xff) made the dataset unusable ("not a whole image cache
// (header)"): the cache kept names as proto3 strings, which do not parse.
TEST_F(ImageFolderNamesTest, NamesThatAreNotUtf8AreKeptAsBytes) {
  const std::string cafe = "caf\xe9", odd = "\xff\xfe";
  Picture(dir_ / "data" / cafe / "1.png", 10);
  Picture(dir_ / "data" / "tea" / (odd + ".png"), 20);
  const std::string data = (dir_ / "data").string();
  const auto d = LoadDataset(data, Split::kTrain, Options());
  ASSERT_EQ(d->Size(), 2u);
  EXPECT_EQ(d->ClassNames(), (std::vector<std::string>{cafe, "tea"}));
  EXPECT_EQ(d->Label(1), 1);
  // From the cache the second time, names and all.
  EXPECT_EQ(LoadDataset(data, Split::kTrain, Options())->ClassNames()[0], cafe);
  EXPECT_EQ(PeekDataset(data, Split::kTrain, Options()).class_names[0], cafe);
}

// Issue 45: a class folder linked to /usr pulled 4,515 of its images into
// training, and a picture linked to /etc/passwd was opened. Links below
// the folder are now skipped, class folders and pictures alike, and
// counted for the caller to say.
TEST_F(ImageFolderNamesTest, LinksOutOfTheDatasetAreSkippedAndCounted) {
  Picture(dir_ / "data" / "a" / "own.png", 10);
  Picture(dir_ / "outside" / "usr" / "icon.png", 20);
  Picture(dir_ / "outside" / "secret.png", 30);
  const fs::path data = dir_ / "data";
  fs::create_directory_symlink(dir_ / "outside" / "usr", data / "usr");            // a class folder
  fs::create_symlink(dir_ / "outside" / "secret.png", data / "a" / "passwd.png");  // a picture
  fs::create_directory_symlink(dir_ / "outside" / "usr", data / "a" / "more");     // a subfolder
  const ImageFolder listed = ListImageFolder(data.string(), Split::kTrain, 0);
  EXPECT_EQ(listed.classes, (std::vector<std::string>{"a"}));
  ASSERT_EQ(listed.files.size(), 1u);
  EXPECT_EQ(fs::path(listed.files[0].path).filename(), "own.png");
  EXPECT_EQ(listed.links_skipped, 3u);
  const DatasetInfo info = PeekDataset(data.string(), Split::kTrain, Options());
  EXPECT_EQ(info.size, 1u);
  EXPECT_EQ(info.links_skipped, 3u);
  // Named by the model, a linked class folder is still not followed.
  DataOptions named = Options();
  named.class_names = {"a", "usr"};
  const auto d = LoadDataset(data.string(), Split::kTrain, named);
  EXPECT_EQ(d->Size(), 1u);
}

TEST_F(ImageFolderNamesTest, UnsupportedFormatsAreCountedAndSaidInOneLine) {
  Picture(dir_ / "photos" / "cat" / "1.png", 100);
  Picture(dir_ / "photos" / "dog" / "1.jpg.png", 100);
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

TEST_F(ImageFolderNamesTest, EverySkippedPictureIsNamed) {
  Picture(dir_ / "photos" / "cat" / "good.png", 100);
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
TEST_F(ImageFolderNamesTest, AClassFolderGivenAsTheDatasetIsRefusedWithTheFix) {
  const fs::path bag = dir_ / "photos" / "bag";
  Picture(bag / "own1.png", 100);
  Picture(bag / "own2.png", 100);
  for (const char* day : {"day0", "day1", "day2"}) Picture(bag / day / "1.png", 100);
  try {
    LoadDataset(bag.string(), Split::kTrain, Options());
    ADD_FAILURE() << "trained on day0..day2 as classes";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("holds 2 pictures of its own"), HasSubstr("day0, day1, day2"),
                      HasSubstr("--dataset " + (dir_ / "photos").string())));
  }
  // Given as the parent, bag is one class among the others.
  Picture(dir_ / "photos" / "shoe" / "1.png", 100);
  const auto d = LoadDataset((dir_ / "photos").string(), Split::kTrain, Options());
  EXPECT_EQ(d->ClassNames(), (std::vector<std::string>{"bag", "shoe"}));
  EXPECT_EQ(d->Size(), 6u);
}

}  // namespace
}  // namespace mt
