#include "core/util/state_dir.h"
#include "tls/tls_options.h"

namespace mt::tls {

std::string DefaultStateDir() { return mt::DefaultStateDir(); }

}  // namespace mt::tls
