#include <filesystem>

#include "core/data/cached_image_dataset.h"
#include "core/data/cifar10_reader.h"
#include "core/data/dataset.h"
#include "core/data/idx_reader.h"
#include "core/data/image_cache.h"
#include "core/data/image_folder.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

struct KnownDataset {
  const char* name;
  const char* dir;
};
constexpr KnownDataset kKnown[] = {
    {"fashion-mnist", "/usr/share/datasets/fashion-mnist"},
    {"mnist", "/usr/share/datasets/mnist"},
    {"cifar10", "/usr/share/datasets/cifar-10"},
    {"cifar-10", "/usr/share/datasets/cifar-10"},
};

// The file `stem` or `stem.gz` in dir, or "".
std::string FindIdx(const fs::path& dir, const std::string& stem) {
  for (const std::string& name : {stem, stem + ".gz"}) {
    const fs::path p = dir / name;
    if (fs::is_regular_file(p)) return p.string();
  }
  return "";
}

// The files of one split, before any is read.
struct DatasetFiles {
  std::string image_folder;  // class folders of pictures
  bool idx = false;
  std::string images, labels;        // IDX
  std::vector<std::string> batches;  // CIFAR-10
};

DatasetFiles FindFiles(const fs::path& dir, Split split) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  DatasetFiles f;
  f.images = FindIdx(dir, prefix + "-images-idx3-ubyte");
  f.labels = FindIdx(dir, prefix + "-labels-idx1-ubyte");
  if (!f.images.empty() || !f.labels.empty()) {
    if (f.images.empty())
      throw DataError(dir.string() + ": has " + f.labels + " but no " + prefix +
                      "-images-idx3-ubyte[.gz]");
    if (f.labels.empty())
      throw DataError(dir.string() + ": has " + f.images + " but no " + prefix +
                      "-labels-idx1-ubyte[.gz]");
    f.idx = true;
    return f;
  }
  for (const fs::path& d : {dir, dir / "cifar-10-batches-bin"}) {
    std::vector<std::string> files;
    if (split == Split::kTrain) {
      for (int i = 1; i <= 5; ++i) {
        const fs::path p = d / ("data_batch_" + std::to_string(i) + ".bin");
        if (fs::is_regular_file(p)) files.push_back(p.string());
      }
    } else if (fs::is_regular_file(d / "test_batch.bin")) {
      files.push_back((d / "test_batch.bin").string());
    }
    if (!files.empty()) {
      f.batches = files;
      return f;
    }
  }
  if (IsImageFolder(dir.string())) {
    f.image_folder = dir.string();
    return f;
  }
  throw DataError(dir.string() + ": no dataset found: looked for " + prefix +
                  "-images-idx3-ubyte[.gz] and " + prefix + "-labels-idx1-ubyte[.gz] (IDX), " +
                  (split == Split::kTrain ? "data_batch_1..5.bin" : "test_batch.bin") +
                  " (CIFAR-10 binary), or class folders of PNG or JPEG images (<class>/*.png, "
                  "or train/<class>/... and test/<class>/...)");
}

DatasetFiles Resolve(const std::string& name_or_dir, Split split) {
  for (const auto& k : kKnown) {
    if (name_or_dir != k.name) continue;
    if (!fs::is_directory(k.dir))
      throw DataError(std::string(k.name) + ": " + k.dir +
                      " does not exist (Debian package dataset-" +
                      (name_or_dir.rfind("cifar", 0) == 0 ? std::string("cifar-10") : name_or_dir) +
                      ", or pass a directory)");
    return FindFiles(k.dir, split);
  }
  if (fs::is_directory(name_or_dir)) return FindFiles(name_or_dir, split);
  throw DataError("dataset '" + name_or_dir + "': not a directory and not a known name (" +
                  KnownDatasetNames() + ")");
}

// The one check of a split against the model it feeds (DataOptions).
void CheckSplitFits(const Shape& sample, int classes, Split split, const DataOptions& options,
                    const std::string& name_or_dir) {
  const std::string which = split == Split::kTrain ? "training" : "test";
  if (options.input.rank() > 0 && sample != options.input)
    throw DataError("dataset " + name_or_dir + ": its " + which + " split has samples of " +
                    sample.ToString() + " but the model takes " + options.input.ToString());
  if (options.classes > 0 && classes > options.classes)
    throw DataError("dataset " + name_or_dir + ": its " + which + " split has " +
                    std::to_string(classes) + " classes but the model outputs " +
                    std::to_string(options.classes));
}

}  // namespace

bool IsKnownDatasetName(const std::string& name) {
  for (const auto& k : kKnown)
    if (name == k.name) return true;
  return false;
}

std::string KnownDatasetNames() {
  std::string known;
  for (const auto& k : kKnown) known += (known.empty() ? "" : ", ") + std::string(k.name);
  return known;
}

std::unique_ptr<Dataset> LoadDataset(const std::string& name_or_dir, Split split,
                                     const DataOptions& options) {
  const DatasetFiles f = Resolve(name_or_dir, split);
  std::unique_ptr<Dataset> data =
      !f.image_folder.empty() ? OpenImageFolder(f.image_folder, split, options)
                              : (f.idx ? LoadIdx(f.images, f.labels) : LoadCifar10(f.batches));
  CheckSplitFits(data->SampleShape(), data->NumClasses(), split, options, name_or_dir);
  data->set_scaling(options.scaling);
  return data;
}

DatasetInfo PeekDataset(const std::string& name_or_dir, Split split, const DataOptions& options) {
  const DatasetFiles f = Resolve(name_or_dir, split);
  if (!f.image_folder.empty()) {
    // Which files decode is known only by decoding them: the cache is built
    // now, once, for the workers on this machine too.
    const auto data = OpenImageFolder(f.image_folder, split, options);
    CheckSplitFits(data->SampleShape(), data->NumClasses(), split, options, name_or_dir);
    const auto& cached = static_cast<const CachedImageDataset&>(*data);
    DatasetInfo info;
    info.size = data->Size();
    info.sample = data->SampleShape();
    info.classes = data->NumClasses();
    info.class_names = data->ClassNames();
    info.image_folder = true;
    info.skipped = cached.skipped();
    info.skipped_examples = cached.skipped_examples();
    info.links_skipped = cached.links_skipped();
    info.unsupported = cached.unsupported();
    return info;
  }
  DatasetInfo info = f.idx ? PeekIdx(f.images) : PeekCifar10(f.batches);
  CheckSplitFits(info.sample, info.classes, split, options, name_or_dir);
  return info;
}

}  // namespace mt
