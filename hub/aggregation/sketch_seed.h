// The seed of the residual sketch's signs (RobustAggregator, for the
// persistence watch). A worker that knew the signs could shape a residual
// that the sketch does not see: each hub draws its own from the operating
// system's CSPRNG (OpenSSL's RAND_bytes) and never tells it. A test that
// must repeat a run names one (HubConfig::sketch_seed).
#pragma once

#include <cstdint>
#include <optional>

namespace mt {

// `configured` when set; otherwise 32 bits from the CSPRNG (throws
// std::runtime_error when it has none to give).
uint32_t SketchSeedOf(std::optional<uint32_t> configured);

}  // namespace mt
