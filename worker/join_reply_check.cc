#include "worker/join_reply_check.h"

#include <cmath>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string>

#include "core/data/dataset.h"

namespace mt {
namespace {

void Require(bool ok, const std::string& what, int64_t value) {
  if (!ok)
    throw std::runtime_error("hub sent a malformed join reply: " + what + " " +
                             std::to_string(value));
}

void RequireReal(bool ok, const std::string& what, double value) {
  if (!ok)
    throw std::runtime_error("hub sent a malformed join reply: " + what + " " +
                             std::to_string(value));
}

}  // namespace

void CheckJoinReply(const proto::JoinReply& join) {
  Require(join.worker_id() >= 0, "worker id", join.worker_id());
  Require(join.global_batch() >= 1 && join.global_batch() <= kMaxWorkerBatch, "global batch",
          join.global_batch());
  Require(join.max_batch() >= 0 && join.max_batch() <= kMaxWorkerBatch, "max batch",
          join.max_batch());
  Require(join.digest_every() >= 0, "digest every", join.digest_every());
  Require(join.param_count() >= 1, "parameter count", static_cast<int64_t>(join.param_count()));
  Require(join.segments_size() >= 1, "segment count", join.segments_size());
  // FedProx's mu multiplies every weight's distance: a NaN or huge one
  // would wreck the model at the first local step.
  RequireReal(std::isfinite(join.prox_mu()) && join.prox_mu() >= 0 && join.prox_mu() <= 100,
              "prox mu", join.prox_mu());
  // A clip or noise the arithmetic cannot hold would leave the update
  // unbounded or destroyed; the hub's flags stay far inside these.
  const double clip = join.privacy().clip(), noise = join.privacy().noise_stddev();
  RequireReal(std::isfinite(clip) && clip >= 0 && clip <= 1e6, "privacy clip", clip);
  RequireReal(std::isfinite(noise) && noise >= 0 && noise <= 1e6, "privacy noise", noise);
  const double fraction = join.data().test_fraction();  // below 0: the default
  RequireReal(std::isfinite(fraction) && fraction < 1, "test fraction", fraction);
  Require(join.data().share_start_size() == join.data().share_count_size(),
          "partition share starts", join.data().share_start_size());
  Require(join.data().share_count_size() <= 65535, "partition share classes",
          join.data().share_count_size());
}

void CheckHubDataset(const std::string& dataset, const std::vector<std::string>& allowed_dirs) {
  // The check below sees the whole string, the file system only the part
  // before a NUL: no path has one.
  if (dataset.find('\0') != std::string::npos)
    throw std::runtime_error(
        "the hub asks this worker to open a dataset whose name holds a NUL byte ('" +
        dataset.substr(0, dataset.find('\0')) + "\\0...'), which no path has; refused");
  if (IsKnownDatasetName(dataset)) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path wanted = fs::weakly_canonical(fs::absolute(dataset, ec), ec);
  for (const auto& dir : allowed_dirs) {
    std::error_code dir_ec;
    const fs::path allowed = fs::weakly_canonical(fs::absolute(dir, dir_ec), dir_ec);
    if (ec || dir_ec || allowed.empty()) continue;
    // Component by component, so /data/a does not allow /data/ab.
    auto a = allowed.begin(), w = wanted.begin();
    while (a != allowed.end() && w != wanted.end() && *a == *w) ++a, ++w;
    if (a == allowed.end() || (std::next(a) == allowed.end() && a->empty())) return;
  }
  std::string allowed;
  for (const auto& d : allowed_dirs) allowed += (allowed.empty() ? "" : ", ") + d;
  throw std::runtime_error(
      "the hub asks this worker to open dataset '" + dataset +
      "', which is neither a known dataset (" + KnownDatasetNames() +
      ") nor under a directory this worker allows (" +
      (allowed.empty() ? std::string("none") : allowed) +
      "); to train on it, start the worker with --allow-data DIR (or MT_ALLOW_DATA), or give it "
      "its own files with --data DIR");
}

std::vector<std::string> SplitDirList(const char* colon_separated) {
  std::vector<std::string> dirs;
  if (colon_separated == nullptr) return dirs;
  std::string part;
  for (const char* c = colon_separated;; ++c) {
    if (*c == ':' || *c == '\0') {
      if (!part.empty()) dirs.push_back(part);
      part.clear();
      if (*c == '\0') break;
    } else {
      part += *c;
    }
  }
  return dirs;
}

}  // namespace mt
