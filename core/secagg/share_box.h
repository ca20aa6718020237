#pragma once
// The shares two workers send each other through the hub, sealed with
// ChaCha20-Poly1305 (OpenSSL EVP) under their pair's share key: the hub
// relays them but can neither read nor alter them. The nonce and the
// associated data name the epoch, the sender's bundle number, the kind, the
// sender and recipient and the mask key the share belongs with, so a box
// cannot be replayed into another round or handed to another worker.
#include <cstdint>
#include <string>

#include "core/secagg/pair_keys.h"

namespace mt::secagg {

// Which secret a share is of: a worker's private key (once per epoch, for
// removing its pairwise masks if it drops) or its self-mask seed (each
// round, for removing its self-mask if it survives).
enum class ShareKind : uint8_t { kPrivateKey = 1, kSelfSeed = 2 };

struct BoxLabel {
  uint64_t epoch = 0;
  uint64_t seq = 0;  // the sender's bundle number: a fresh nonce for every box
  ShareKind kind = ShareKind::kPrivateKey;
  int32_t from = 0;
  int32_t to = 0;
  Key32 mask_public{};  // the sender's mask key for the round the share serves
};

std::string Seal(const Key32& key, const BoxLabel& label, const std::string& plaintext);
// Throws std::runtime_error when the box was not sealed under this key and
// label (altered, replayed, or for somebody else).
std::string Open(const Key32& key, const BoxLabel& label, const std::string& box);

}  // namespace mt::secagg
