#include "core/checkpoint/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/optim/optimizer_proto.h"
#include "core/util/atomic_file.h"
#include "core/util/byte_io.h"
#include "train_state.pb.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[4] = {'M', 'T', 'C', 'K'};
constexpr const char* kPrefix = "ckpt-";
constexpr const char* kSuffix = ".mtc";

uint32_t Crc(const char* p, size_t n) {
  return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n)));
}

// Step number of a checkpoint file name, or -1.
int64_t StepOf(const std::string& name) {
  const size_t pre = std::string(kPrefix).size(), suf = std::string(kSuffix).size();
  if (name.size() <= pre + suf || name.rfind(kPrefix, 0) != 0 ||
      name.compare(name.size() - suf, suf, kSuffix) != 0)
    return -1;
  const std::string digits = name.substr(pre, name.size() - pre - suf);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

std::vector<std::pair<int64_t, std::string>> ListCheckpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t step = StepOf(it->path().filename().string());
    if (step >= 0 && it->is_regular_file()) found.emplace_back(step, it->path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

size_t NonFinite(const std::vector<float>& v) {
  return static_cast<size_t>(
      std::count_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); }));
}

// What a checksum cannot vouch for: a checkpoint written from a broken run,
// or crafted, must not be resumed into a hang or a diverged model.
void CheckContent(const Checkpoint& c, const std::string& origin) {
  if (c.step < 0 || c.epoch < 0 || c.optimizer.steps < 0 || c.global_batch < 0)
    throw CheckpointError(origin + ": negative step (" + std::to_string(c.step) + "), epoch (" +
                          std::to_string(c.epoch) + "), optimizer step count (" +
                          std::to_string(c.optimizer.steps) + ") or global batch (" +
                          std::to_string(c.global_batch) + ")");
  if (c.weights.empty()) throw CheckpointError(origin + ": holds no weights");
  if (const size_t bad = NonFinite(c.weights))
    throw CheckpointError(origin + ": " + std::to_string(bad) + " of its " +
                          std::to_string(c.weights.size()) + " weights are not finite");
  if (const size_t bad = NonFinite(c.running_stats))
    throw CheckpointError(origin + ": " + std::to_string(bad) + " of its " +
                          std::to_string(c.running_stats.size()) +
                          " running statistics are not finite");
  if (const size_t bad = NonFinite(c.optimizer.slots))
    throw CheckpointError(origin + ": " + std::to_string(bad) +
                          " values of its optimizer state are not finite");
  // Its settings as the command line's: a learning rate of NaN or 1e30, or
  // momentum 2, would train into a diverged model.
  try {
    CheckOptimizerConfig(c.optimizer.config);
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(origin + ": " + e.what());
  }
}

}  // namespace

std::string EncodeCheckpoint(const Checkpoint& c) {
  proto::Checkpoint m;
  m.set_model_spec(c.model_spec);
  m.set_step(c.step);
  m.set_epoch(c.epoch);
  m.set_seed(c.seed);
  m.set_global_batch(c.global_batch);
  m.mutable_weights()->Add(c.weights.begin(), c.weights.end());
  *m.mutable_optimizer() = ToProto(c.optimizer);
  m.mutable_running_stats()->Add(c.running_stats.begin(), c.running_stats.end());
  ByteWriter w;
  w.Raw(kMagic, 4);
  w.U32(kCheckpointVersion);
  std::string body;
  if (!m.SerializeToString(&body)) throw CheckpointError("cannot encode the checkpoint");
  w.Raw(body.data(), body.size());
  const std::string& b = w.bytes();
  w.U32(Crc(b.data(), b.size()));
  return std::move(w.bytes());
}

Checkpoint DecodeCheckpoint(const std::string& bytes, const std::string& origin) {
  if (bytes.size() < 12 || bytes.compare(0, 4, kMagic, 4) != 0)
    throw CheckpointError(origin + ": not an mt checkpoint (bad magic)");
  uint32_t version;
  std::memcpy(&version, bytes.data() + 4, 4);
  if (version == 1)
    throw CheckpointError(
        origin +
        ": checkpoint format 1 comes from an older mt, which this build does not read; "
        "finish that run with the mt that wrote it, or start afresh");
  if (version != kCheckpointVersion)
    throw CheckpointError(origin + ": checkpoint format version " + std::to_string(version) +
                          " is not supported (this build reads version " +
                          std::to_string(kCheckpointVersion) + ")");
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  const uint32_t actual = Crc(bytes.data(), bytes.size() - 4);
  if (stored != actual) {
    // A cut-off file also fails the checksum; say which it most likely is.
    throw CheckpointError(origin + ": checksum mismatch (file corrupt or truncated)");
  }
  proto::Checkpoint m;
  if (!m.ParseFromArray(bytes.data() + 8, static_cast<int>(bytes.size() - 12)))
    throw CheckpointError(origin + ": unreadable checkpoint body");
  try {
    Checkpoint c;
    c.model_spec = m.model_spec();
    c.step = m.step();
    c.epoch = m.epoch();
    c.seed = m.seed();
    c.global_batch = m.global_batch();
    c.weights.assign(m.weights().begin(), m.weights().end());
    c.optimizer = FromProto(m.optimizer());
    c.running_stats.assign(m.running_stats().begin(), m.running_stats().end());
    CheckContent(c, origin);
    return c;
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(origin + ": " + e.what());
  }
}

void SaveCheckpoint(const std::string& path, const Checkpoint& c) {
  try {
    WriteFileAtomically(path, EncodeCheckpoint(c));
  } catch (const std::runtime_error& e) {
    throw CheckpointError(std::string("cannot write checkpoint: ") + e.what());
  }
}

Checkpoint LoadCheckpoint(const std::string& path) {
  std::string bytes;
  try {
    bytes = ReadFile(path);
  } catch (const std::runtime_error& e) {
    throw CheckpointError(e.what());
  }
  return DecodeCheckpoint(bytes, path);
}

std::string CheckpointPath(const std::string& dir, int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%08lld%s", kPrefix, static_cast<long long>(step), kSuffix);
  return (fs::path(dir) / name).string();
}

ResumePoint NewestValidCheckpoint(const std::string& dir) {
  ResumePoint r;
  const auto all = ListCheckpoints(dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      r.checkpoint = LoadCheckpoint(it->second);
      r.path = it->second;
      return r;
    } catch (const CheckpointError& e) {
      r.skipped.push_back(e.what());
    }
  }
  if (r.skipped.empty()) return r;
  std::string why;
  for (const std::string& s : r.skipped) why += "\n  " + s;
  throw CheckpointError("no checkpoint in " + dir + " can be resumed from:" + why);
}

void PruneCheckpoints(const std::string& dir, int keep) {
  auto all = ListCheckpoints(dir);
  for (size_t i = 0; i + keep < all.size(); ++i) {
    std::error_code ec;
    fs::remove(all[i].second, ec);
  }
}

}  // namespace mt
