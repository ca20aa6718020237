// The C API's configuration (worker/mt_worker.h) as the worker's own
// (worker/worker_config.h): the one place each C field is read, so a test
// can check that every field arrives (tests/worker/worker_config_from_c_test.cc).
#pragma once

#include "worker/mt_worker.h"
#include "worker/worker_config.h"

namespace mt {

// Throws std::invalid_argument with the reason an app sees (a missing or
// bad hub address, a device word other than auto, cpu or opencl, a value
// out of range). The TLS files are not read here: the caller checks them
// with tls::MakeChannelSecurity. Fields after struct_size are left at
// their version-1 meaning.
WorkerConfig WorkerConfigFromC(const mt_worker_config* c);

}  // namespace mt
