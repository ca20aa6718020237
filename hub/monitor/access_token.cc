#include "hub/monitor/access_token.h"

#include <string_view>

#include "core/util/constant_time.h"

namespace mt {
namespace {

// The credentials of "Bearer <token>" (the scheme in any case, as HTTP's
// auth schemes are), or "" for any other header.
std::string_view BearerToken(std::string_view header) {
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size()) return {};
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (static_cast<char>(header[i] | 0x20) != kScheme[i]) return {};
  std::string_view token = header.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

}  // namespace

bool RequestAuthorized(const std::string& expected_token, const std::string& authorization,
                       const std::string& query_token) {
  if (expected_token.empty()) return true;
  // Both are checked whatever the first says, so the time taken does not
  // tell which one was tried.
  const bool by_header = ConstantTimeEquals(BearerToken(authorization), expected_token);
  const bool by_query = ConstantTimeEquals(query_token, expected_token);
  return by_header || by_query;
}

}  // namespace mt
