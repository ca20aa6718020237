// Image folders as users keep them: DIR/train/<class>/*.png|jpg|jpeg and
// optionally DIR/test/<class>/..., or the class folders directly in DIR.
// Without a test folder a fixed share of each class is held out for
// testing, chosen by a hash of the file's path inside DIR, so every device
// holds out the same files and adding photos moves no others. Symbolic
// links below DIR are skipped and counted, never followed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace mt {

// Held out for testing when a folder has no test/ and --test-fraction is
// not given.
constexpr double kDefaultTestFraction = 0.1;

struct ImageFile {
  std::string path;
  int label = 0;
  uint64_t bytes = 0;
  int64_t modified_ns = 0;  // with bytes, tells a changed file from the cached one
};

struct ImageFolder {
  std::string root;                  // DIR, as given
  std::vector<std::string> classes;  // the train folder's class folders, sorted
  std::vector<ImageFile> files;      // of the split asked for, sorted by path
  double test_fraction = 0;          // held out (0 when DIR has test/)
  // Files left out because their name is not .png, .jpg or .jpeg, by
  // extension (".webp", lower case; "" for none): counted to be said.
  std::map<std::string, size_t> unsupported;
  // Symbolic links below DIR (class folders, pictures): never followed,
  // since they may lead anywhere (/usr, /etc/passwd); counted to be said.
  size_t links_skipped = 0;
};

// "skipped 3 .webp files and 1 .gif file: format not supported (mt reads
// PNG and JPEG)", or "" when nothing was left out.
std::string UnsupportedFilesNote(const std::map<std::string, size_t>& unsupported);

// Whether `dir` holds class folders of images (directly or under train/).
bool IsImageFolder(const std::string& dir);

// The files of one split. test_fraction < 0: kDefaultTestFraction unless
// DIR has a test folder. `known_classes` (the model's, when it names them):
// labels are places in that list, so devices whose folders hold different
// classes agree; empty: the folder's own class folders, sorted. Throws
// DataError for no classes, an empty class, a class the training set (or
// the model) lacks, a fraction with a test folder, or pictures lying
// beside the class folders (DIR given is likely one class itself).
ImageFolder ListImageFolder(const std::string& dir, Split split, double test_fraction,
                            const std::vector<std::string>& known_classes = {});

}  // namespace mt
