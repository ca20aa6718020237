#pragma once

#include <string>

namespace mt {

// Where a machine keeps what must outlive a run and stay private (the hub's
// TLS key, the hubs a worker has met, the image cache's key):
// $MT_STATE_DIR, else $HOME/.mt. Throws std::runtime_error when neither is
// set (a service without a home must be given --state-dir).
std::string DefaultStateDir();

}  // namespace mt
