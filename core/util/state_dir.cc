#include "core/util/state_dir.h"

#include <cstdlib>
#include <stdexcept>

namespace mt {

std::string DefaultStateDir() {
  if (const char* dir = std::getenv("MT_STATE_DIR"); dir && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.mt";
  throw std::runtime_error(
      "no state directory: set MT_STATE_DIR or HOME, or give --state-dir (it keeps the hub's TLS "
      "certificate, the fingerprints of hubs a worker has met and the image cache's key)");
}

}  // namespace mt
