#include "core/secagg/share_box.h"

#include <memory>
#include <stdexcept>

#include <openssl/evp.h>

namespace mt::secagg {
namespace {

constexpr int kTagBytes = 16;

struct CtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxFree>;

void Put(std::string* s, uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) s->push_back(static_cast<char>(v >> (8 * b)));
}

// 12 bytes: bundle number, kind, and which of the pair sends (the key is
// the same both ways; each direction sends one box of a kind per bundle).
std::string Nonce(const BoxLabel& l) {
  std::string n;
  Put(&n, l.seq, 8);
  Put(&n, static_cast<uint8_t>(l.kind), 1);
  Put(&n, l.from < l.to ? 0 : 1, 1);
  Put(&n, 0, 2);
  return n;
}

std::string Aad(const BoxLabel& l) {
  std::string a = "mt-secagg-box";
  Put(&a, l.epoch, 8);
  Put(&a, l.seq, 8);
  Put(&a, static_cast<uint8_t>(l.kind), 1);
  Put(&a, static_cast<uint32_t>(l.from), 4);
  Put(&a, static_cast<uint32_t>(l.to), 4);
  a.append(l.mask_public.begin(), l.mask_public.end());
  return a;
}

const unsigned char* U(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

std::string Seal(const Key32& key, const BoxLabel& label, const std::string& plaintext) {
  Ctx ctx(EVP_CIPHER_CTX_new());
  const std::string nonce = Nonce(label), aad = Aad(label);
  std::string out(plaintext.size() + kTagBytes, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  int len = 0;
  if (!ctx ||
      EVP_EncryptInit_ex(ctx.get(), EVP_chacha20_poly1305(), nullptr, key.data(), U(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, U(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), o, &len, U(plaintext), static_cast<int>(plaintext.size())) !=
          1 ||
      EVP_EncryptFinal_ex(ctx.get(), o + len, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, kTagBytes, o + plaintext.size()) != 1) {
    throw std::runtime_error("secagg: sealing a share failed (OpenSSL)");
  }
  return out;
}

std::string Open(const Key32& key, const BoxLabel& label, const std::string& box) {
  if (box.size() < static_cast<size_t>(kTagBytes)) {
    throw std::runtime_error("secagg: a share box too short to hold its tag");
  }
  Ctx ctx(EVP_CIPHER_CTX_new());
  const std::string nonce = Nonce(label), aad = Aad(label);
  const size_t n = box.size() - kTagBytes;
  std::string out(n, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  std::string tag = box.substr(n);
  int len = 0;
  if (!ctx ||
      EVP_DecryptInit_ex(ctx.get(), EVP_chacha20_poly1305(), nullptr, key.data(), U(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, U(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), o, &len, U(box), static_cast<int>(n)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, kTagBytes, tag.data()) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), o + len, &len) != 1) {
    throw std::runtime_error("secagg: a share box does not open (altered, or not for this pair)");
  }
  return out;
}

}  // namespace mt::secagg
