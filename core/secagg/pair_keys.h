#pragma once
// X25519 key agreement (OpenSSL EVP): each worker holds one key pair per
// membership epoch; two workers derive the same secret from their own
// private key and the other's public key, and from it (HKDF-SHA256) one key
// for the masks they add with opposite signs and one for the shares they
// send each other through the hub.
#include <array>
#include <cstdint>
#include <string>

namespace mt::secagg {

using Key32 = std::array<uint8_t, 32>;

class KeyPair {
 public:
  static KeyPair Generate();
  // The pair of a private key (a dropped worker's, rebuilt from shares).
  static KeyPair FromPrivate(const Key32& private_key);

  const Key32& public_key() const { return public_; }
  const Key32& private_key() const { return private_; }

  // The X25519 secret shared with the owner of `peer_public`. Throws on a
  // public key that gives the all-zero secret (a low-order point).
  Key32 Agree(const Key32& peer_public) const;

 private:
  Key32 private_{};
  Key32 public_{};
};

// What a pair's shared secret is used for; each gets its own key.
enum class KeyUse : uint8_t { kMask = 1, kShareBox = 2 };

// HKDF-SHA256 of the shared secret, bound to the use, the epoch and the
// two worker ids (in ascending order, so both ends derive the same key).
Key32 DeriveKey(const Key32& shared_secret, KeyUse use, uint64_t epoch, int32_t id_a, int32_t id_b);

// 32 bytes from OpenSSL's CSPRNG.
Key32 RandomKey();

}  // namespace mt::secagg
