#include "core/data/decode_budget.h"

#include <condition_variable>
#include <mutex>

#include "core/data/dataset.h"

namespace mt {
namespace {

std::mutex g_mutex;
std::condition_variable g_freed;
uint64_t g_held = 0;

}  // namespace

void WholeImageHold::Take(uint64_t bytes, const std::string& path, const std::string& what) {
  if (bytes > kWholeImageBudget)
    throw DataError(path + ": " + what + " would take " + std::to_string(bytes >> 20) +
                    " MB at once; at most " + std::to_string(kWholeImageBudget >> 20) +
                    " MB (save it as a baseline JPEG or a non-interlaced PNG, or smaller)");
  std::unique_lock<std::mutex> lock(g_mutex);
  g_freed.wait(lock, [&] { return g_held + bytes <= kWholeImageBudget; });
  g_held += bytes;
  bytes_ += bytes;
}

WholeImageHold::~WholeImageHold() {
  if (bytes_ == 0) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_held -= bytes_;
  }
  g_freed.notify_all();
}

}  // namespace mt
