#include "core/secagg/pair_keys.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

namespace mt::secagg {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;

[[noreturn]] void Fail(const char* what) {
  throw std::runtime_error(std::string("secagg: ") + what + " failed (OpenSSL)");
}

}  // namespace

KeyPair KeyPair::Generate() {
  PkeyCtx ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, nullptr));
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) <= 0 || EVP_PKEY_keygen(ctx.get(), &raw) <= 0) {
    Fail("X25519 key generation");
  }
  Pkey key(raw);
  KeyPair pair;
  size_t n = pair.private_.size();
  if (EVP_PKEY_get_raw_private_key(key.get(), pair.private_.data(), &n) <= 0 || n != 32) {
    Fail("X25519 private key export");
  }
  n = pair.public_.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), pair.public_.data(), &n) <= 0 || n != 32) {
    Fail("X25519 public key export");
  }
  return pair;
}

KeyPair KeyPair::FromPrivate(const Key32& private_key) {
  Pkey key(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, private_key.data(),
                                        private_key.size()));
  if (!key) Fail("X25519 private key import");
  KeyPair pair;
  pair.private_ = private_key;
  size_t n = pair.public_.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), pair.public_.data(), &n) <= 0 || n != 32) {
    Fail("X25519 public key export");
  }
  return pair;
}

Key32 KeyPair::Agree(const Key32& peer_public) const {
  Pkey mine(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, private_.data(), private_.size()));
  Pkey theirs(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, peer_public.data(),
                                          peer_public.size()));
  if (!mine || !theirs) Fail("X25519 key import");
  PkeyCtx ctx(EVP_PKEY_CTX_new(mine.get(), nullptr));
  Key32 secret{};
  size_t n = secret.size();
  // OpenSSL refuses a peer key that yields the all-zero secret.
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 ||
      EVP_PKEY_derive_set_peer(ctx.get(), theirs.get()) <= 0 ||
      EVP_PKEY_derive(ctx.get(), secret.data(), &n) <= 0 || n != secret.size()) {
    Fail("X25519 key agreement");
  }
  return secret;
}

Key32 DeriveKey(const Key32& shared_secret, KeyUse use, uint64_t epoch, int32_t id_a,
                int32_t id_b) {
  const int32_t lo = std::min(id_a, id_b);
  const int32_t hi = std::max(id_a, id_b);
  // "mt-secagg" | use | epoch | lo | hi, little-endian.
  std::string info = "mt-secagg";
  info.push_back(static_cast<char>(use));
  for (int b = 0; b < 8; ++b) info.push_back(static_cast<char>(epoch >> (8 * b)));
  for (int32_t id : {lo, hi}) {
    for (int b = 0; b < 4; ++b)
      info.push_back(static_cast<char>(static_cast<uint32_t>(id) >> (8 * b)));
  }
  PkeyCtx ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr));
  Key32 out{};
  size_t n = out.size();
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_hkdf_md(ctx.get(), EVP_sha256()) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_key(ctx.get(), shared_secret.data(),
                                 static_cast<int>(shared_secret.size())) <= 0 ||
      EVP_PKEY_CTX_add1_hkdf_info(ctx.get(), reinterpret_cast<const unsigned char*>(info.data()),
                                  static_cast<int>(info.size())) <= 0 ||
      EVP_PKEY_derive(ctx.get(), out.data(), &n) <= 0 || n != out.size()) {
    Fail("HKDF");
  }
  return out;
}

Key32 RandomKey() {
  Key32 key{};
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) Fail("RAND_bytes");
  return key;
}

}  // namespace mt::secagg
