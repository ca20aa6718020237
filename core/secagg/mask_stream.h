#pragma once
// Masks: a 32-byte key expanded by ChaCha20 (OpenSSL EVP_chacha20) into one
// uint32 per parameter. The nonce is the round and the mask's kind, and the
// block counter the parameter's position, so the mask of any segment of the
// vector can be made on its own, in any order, by the worker and the hub
// alike, and each round's masks are fresh under a key agreed once per
// membership epoch.
#include <cstddef>
#include <cstdint>

#include "core/secagg/pair_keys.h"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace mt::secagg {

enum class MaskKind : uint32_t { kPair = 1, kSelf = 2 };

class MaskStream {
 public:
  MaskStream();
  ~MaskStream();
  MaskStream(const MaskStream&) = delete;
  MaskStream& operator=(const MaskStream&) = delete;

  // values[k] += mask[first + k] (mod 2^32), or -= with `subtract`, for
  // k in [0, n): the mask of parameters [first, first + n).
  void Apply(const Key32& key, uint64_t round, MaskKind kind, uint64_t first, uint32_t* values,
             size_t n, bool subtract);

 private:
  EVP_CIPHER_CTX* ctx_;
};

}  // namespace mt::secagg
