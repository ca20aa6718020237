#include "core/secagg/mask_stream.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <openssl/evp.h>

namespace mt::secagg {
namespace {

constexpr size_t kWordsPerBlock = 16;  // a ChaCha20 block is 64 bytes
constexpr size_t kChunkWords = 1024;   // keystream made 4 KiB at a time, on the stack

[[noreturn]] void Fail() { throw std::runtime_error("secagg: ChaCha20 mask failed (OpenSSL)"); }

}  // namespace

MaskStream::MaskStream() : ctx_(EVP_CIPHER_CTX_new()) {
  if (ctx_ == nullptr) Fail();
}

MaskStream::~MaskStream() { EVP_CIPHER_CTX_free(ctx_); }

void MaskStream::Apply(const Key32& key, uint64_t round, MaskKind kind, uint64_t first,
                       uint32_t* values, size_t n, bool subtract) {
  if (n == 0) return;
  const uint64_t block = first / kWordsPerBlock;
  if (block > 0xFFFFFFFFull) throw std::invalid_argument("secagg: mask position out of range");
  // OpenSSL's 16-byte IV: the 32-bit block counter, then the 96-bit nonce
  // (round, kind), all little-endian.
  unsigned char iv[16];
  for (int b = 0; b < 4; ++b) iv[b] = static_cast<unsigned char>(block >> (8 * b));
  for (int b = 0; b < 8; ++b) iv[4 + b] = static_cast<unsigned char>(round >> (8 * b));
  const auto k = static_cast<uint32_t>(kind);
  for (int b = 0; b < 4; ++b) iv[12 + b] = static_cast<unsigned char>(k >> (8 * b));
  if (EVP_EncryptInit_ex(ctx_, EVP_chacha20(), nullptr, key.data(), iv) != 1) Fail();

  static const unsigned char kZeros[kChunkWords * 4] = {};
  uint32_t stream[kChunkWords];
  size_t skip = first % kWordsPerBlock;  // words of the first block before `first`
  size_t done = 0;
  while (done < n) {
    const size_t words = std::min(kChunkWords, n - done + skip);
    int len = 0;
    if (EVP_EncryptUpdate(ctx_, reinterpret_cast<unsigned char*>(stream), &len, kZeros,
                          static_cast<int>(words * 4)) != 1 ||
        len != static_cast<int>(words * 4)) {
      Fail();
    }
    // Keystream bytes read as little-endian words, the same on every device.
    for (size_t w = skip; w < words; ++w) {
      const auto* b = reinterpret_cast<const unsigned char*>(&stream[w]);
      const uint32_t m = static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
                         static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24;
      uint32_t& v = values[done + w - skip];
      v = subtract ? v - m : v + m;
    }
    done += words - skip;
    skip = 0;
  }
}

}  // namespace mt::secagg
