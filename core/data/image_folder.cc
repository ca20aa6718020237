#include "core/data/image_folder.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>

namespace mt {
namespace {

namespace fs = std::filesystem;

std::string Joined(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < 20; ++i) s += (i ? ", " : "") + names[i];
  return names.size() > 20 ? s + ", ..." : s;
}

bool Hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

std::string Extension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

bool ImageName(const fs::path& p) {
  const std::string ext = Extension(p);
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

// Links are never followed below DIR (a class folder linked to /usr, a
// picture linked to /etc/passwd): only what the entry itself is counts.
bool RealDirectory(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::directory;
}

std::vector<std::string> ClassFolders(const fs::path& root, size_t* links = nullptr) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (Hidden(entry.path())) continue;
    const fs::file_type type = entry.symlink_status(ec).type();
    if (type == fs::file_type::directory) names.push_back(entry.path().filename().string());
    if (type == fs::file_type::symlink && links) ++*links;
  }
  if (ec) throw DataError(root.string() + ": cannot list: " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

bool HasImages(const fs::path& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->symlink_status(ec).type() == fs::file_type::regular && ImageName(it->path()))
      return true;
  return false;
}

// Pictures directly in `dir`, not in a class folder: how many, and one.
size_t LoosePictures(const fs::path& dir, std::string* example) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (Hidden(entry.path()) || entry.symlink_status(ec).type() != fs::file_type::regular ||
        !ImageName(entry.path()))
      continue;
    if (n++ == 0) *example = entry.path().filename().string();
  }
  return n;
}

// A class folder given as the dataset ("photos/bag" holding its pictures
// and subfolders day0..2) would train on the subfolders as classes and
// leave its own pictures out, silently.
void RefuseLoosePictures(const fs::path& root, const std::vector<std::string>& classes) {
  std::string example;
  const size_t loose = LoosePictures(root, &example);
  if (loose == 0) return;
  const fs::path parent = root.parent_path().empty() ? fs::path("..") : root.parent_path();
  throw DataError(
      root.string() + ": holds " + std::to_string(loose) + " picture" + (loose > 1 ? "s" : "") +
      " of its own (" + example + ") beside " +
      (classes.empty() ? "no class folders" : "its class folders (" + Joined(classes) + ")") +
      ", which are never read: an image folder keeps its pictures in class folders, "
      "DIR/<class>/*.png|jpg. If " +
      root.string() + " is one class, give the folder above it (--dataset " + parent.string() +
      "); otherwise move these pictures into a class folder");
}

// Where the training class folders are: DIR/train, or DIR itself.
fs::path TrainRoot(const fs::path& dir) {
  if (RealDirectory(dir / "train")) return dir / "train";
  return dir;
}

// Uniform in [0, 1) from a path: FNV-1a, then a mixer.
double PathHash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

// Every image under root/<class> for the given classes, sorted by path.
void ListClasses(const fs::path& root, const std::map<std::string, int>& labels, ImageFolder& out,
                 bool keep_empty, double held_out, bool want_held_out) {
  for (const auto& [name, label] : labels) {
    const fs::path dir = root / name;
    if (!RealDirectory(dir)) {
      std::error_code ec;
      if (fs::is_symlink(dir, ec)) ++out.links_skipped;
      continue;
    }
    std::vector<ImageFile> files;
    size_t seen = 0;  // before the hold-out
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (Hidden(it->path())) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      // The iterator itself never descends into a linked folder.
      const fs::file_type type = it->symlink_status(ec).type();
      if (type == fs::file_type::symlink) ++out.links_skipped;
      if (type != fs::file_type::regular) continue;
      if (!ImageName(it->path())) {
        ++out.unsupported[Extension(it->path())];
        continue;
      }
      ++seen;
      const std::string inside = name + "/" + fs::relative(it->path(), dir).generic_string();
      if (held_out > 0 && (PathHash(inside) < held_out) != want_held_out) continue;
      ImageFile f;
      f.path = it->path().string();
      f.label = label;
      f.bytes = it->file_size();
      f.modified_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          it->last_write_time().time_since_epoch())
                          .count();
      files.push_back(std::move(f));
    }
    if (ec) throw DataError(dir.string() + ": cannot list: " + ec.message());
    if (seen == 0 && !keep_empty)
      throw DataError(dir.string() + ": class folder with no PNG or JPEG images");
    std::sort(files.begin(), files.end(),
              [](const ImageFile& a, const ImageFile& b) { return a.path < b.path; });
    out.files.insert(out.files.end(), std::make_move_iterator(files.begin()),
                     std::make_move_iterator(files.end()));
  }
}

}  // namespace

std::string UnsupportedFilesNote(const std::map<std::string, size_t>& unsupported) {
  std::vector<std::string> parts;
  for (const auto& [ext, n] : unsupported) {
    const std::string files = n > 1 ? "files" : "file";
    parts.push_back(std::to_string(n) + " " +
                    (ext.empty() ? files + " without an extension" : ext + " " + files));
  }
  if (parts.empty()) return "";
  std::string note = parts[0];
  for (size_t i = 1; i < parts.size(); ++i)
    note += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return "skipped " + note + ": format not supported (mt reads PNG and JPEG)";
}

bool IsImageFolder(const std::string& dir) {
  const fs::path root = TrainRoot(dir);
  for (const std::string& name : ClassFolders(root))
    if (HasImages(root / name)) return true;
  return false;
}

ImageFolder ListImageFolder(const std::string& dir, Split split, double test_fraction,
                            const std::vector<std::string>& known_classes) {
  const fs::path root = TrainRoot(dir);
  const bool has_test = root != fs::path(dir) && RealDirectory(fs::path(dir) / "test");
  if (has_test && test_fraction > 0)
    throw DataError(dir + ": has a test folder; --test-fraction is for folders without one");
  if (test_fraction >= 1)
    throw DataError("--test-fraction " + std::to_string(test_fraction) +
                    " leaves nothing to train on");
  ImageFolder out;
  out.root = dir;
  out.classes = known_classes.empty() ? ClassFolders(root, &out.links_skipped) : known_classes;
  if (!known_classes.empty()) {
    // Labels are places in the model's list: a phone's folder may lack some
    // classes, but may not bring one the model has no output for.
    const std::set<std::string> known(known_classes.begin(), known_classes.end());
    for (const fs::path& r : {root, fs::path(dir) / "test"}) {
      if (!RealDirectory(r) || (r != root && root == fs::path(dir))) continue;
      for (const std::string& name : ClassFolders(r))
        if (!known.count(name))
          throw DataError((r / name).string() + ": class '" + name +
                          "' is not one the model was trained for (" + Joined(known_classes) + ")");
    }
  }
  RefuseLoosePictures(root, known_classes.empty() ? out.classes : ClassFolders(root));
  if (out.classes.empty())
    throw DataError(root.string() +
                    ": no class folders (expected <class>/*.png|jpg|jpeg, or train/<class>/...)");
  if (out.classes.size() > 65535)
    throw DataError(root.string() + ": " + std::to_string(out.classes.size()) +
                    " class folders; at most 65535");
  std::map<std::string, int> labels;
  for (size_t i = 0; i < out.classes.size(); ++i) labels[out.classes[i]] = static_cast<int>(i);
  out.test_fraction = has_test ? 0 : (test_fraction < 0 ? kDefaultTestFraction : test_fraction);
  if (split == Split::kTest && has_test) {
    const fs::path test = fs::path(dir) / "test";
    for (const std::string& name : ClassFolders(test))
      if (!labels.count(name))
        throw DataError((test / name).string() + ": a test class the training set (" +
                        root.string() + ") has no folder for");
    ListClasses(test, labels, out, /*keep_empty=*/true, 0, false);
  } else {
    const bool test = split == Split::kTest;
    // A training class must have images (unless the model's list names it:
    // then this device has none of it); a small class may have no test share.
    ListClasses(root, labels, out, /*keep_empty=*/test || !known_classes.empty(), out.test_fraction,
                test);
  }
  if (out.files.empty())
    throw DataError(dir + ": no " + (split == Split::kTest ? "test" : "training") + " images" +
                    (split == Split::kTest && !has_test
                         ? " (no test folder; hold some out with --test-fraction)"
                         : ""));
  return out;
}

}  // namespace mt
