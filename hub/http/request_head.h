// An HTTP/1.x request head (request line and header fields) parsed from
// the bytes a connection has received, with hard limits: the dashboard's
// server (http_connection.h) never buffers more than kMaxHeadBytes of a
// request, so a peer sending an endless line costs it nothing. Pure: no
// sockets, tested and fuzzed on its own (tests/fuzz/http_request_head_fuzz.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mt::http {

// The whole head, request line and fields, blank line included.
constexpr size_t kMaxHeadBytes = 8192;
constexpr size_t kMaxHeaderFields = 64;
constexpr int kMaxEmptyLinesFirst = 4;  // before the request line

// What the server acts on; every other field is checked for form and dropped.
struct RequestHead {
  std::string method;
  std::string path;   // the target before '?', as sent
  std::string query;  // after '?', still percent-encoded
  int minor_version = 1;
  std::string authorization;  // "" when absent
  bool has_body = false;      // Content-Length above 0, or any Transfer-Encoding
  bool keep_alive = true;     // HTTP/1.1 unless "close"; HTTP/1.0 only with "keep-alive"
};

struct HeadParse {
  enum class Outcome { kIncomplete, kComplete, kRefused };
  Outcome outcome = Outcome::kIncomplete;
  size_t head_bytes = 0;  // kComplete: how many bytes of the input the head took
  int status = 0;         // kRefused: 400, 414 (request line too long), 431, 505
  std::string why;        // kRefused: for the reply's body
};

// Parses the head at the start of `bytes` into `head`. kIncomplete means
// more bytes may complete it; it never is once kMaxHeadBytes arrived
// without the blank line that ends a head (then kRefused, 414 or 431).
// Up to kMaxEmptyLinesFirst empty lines before the request line are
// skipped, as RFC 9112 asks.
HeadParse ParseRequestHead(std::string_view bytes, RequestHead& head);

// The first value of `name` in a query string ("a=1&b=2"), percent- and
// '+'-decoded; "" when absent.
std::string QueryParameter(std::string_view query, std::string_view name);

}  // namespace mt::http
