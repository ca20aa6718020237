// Comparing secrets (tokens, session secrets) without stopping at the first
// difference, so the time taken does not tell an attacker how much of a
// guess was right. The length is not hidden.
#pragma once

#include <string_view>

namespace mt {

inline bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace mt
