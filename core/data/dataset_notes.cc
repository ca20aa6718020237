#include "core/data/dataset_notes.h"

#include "core/data/image_folder.h"

namespace mt {

std::vector<std::string> DatasetNotes(const std::string& dataset, const DatasetInfo& info) {
  std::vector<std::string> notes;
  if (info.skipped > 0) {
    notes.push_back(dataset + ": left out " + std::to_string(info.skipped) +
                    " picture(s) that do not decode (--skip-bad-images):");
    for (const std::string& example : info.skipped_examples) notes.push_back("  " + example);
    if (info.skipped > info.skipped_examples.size())
      notes.push_back("  and " + std::to_string(info.skipped - info.skipped_examples.size()) +
                      " more");
  }
  const std::string unsupported = UnsupportedFilesNote(info.unsupported);
  if (!unsupported.empty()) notes.push_back(dataset + ": " + unsupported);
  if (info.links_skipped > 0)
    notes.push_back(dataset + ": skipped " + std::to_string(info.links_skipped) +
                    " symbolic link(s) to class folders or pictures: links are not followed, "
                    "since they may lead out of the dataset (copy the files in instead)");
  return notes;
}

}  // namespace mt
