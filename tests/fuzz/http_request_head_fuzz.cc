// Fuzzes the dashboard's request head parser (hub/http/request_head.h) and
// what the routes make of a head (hub/http/dashboard_routes.h): any bytes a
// stranger sends must parse, wait for more, or be refused with a 4xx/5xx,
// never look past kMaxHeadBytes, and say the same whether they arrive at
// once or in two pieces (the server parses again as bytes come).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hub/http/dashboard_routes.h"
#include "hub/http/request_head.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mt::http::HeadParse;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  mt::http::RequestHead head;
  const HeadParse whole = mt::http::ParseRequestHead(bytes, head);
  switch (whole.outcome) {
    case HeadParse::Outcome::kComplete:
      Check(whole.head_bytes > 0 && whole.head_bytes <= size &&
            whole.head_bytes <= mt::http::kMaxHeadBytes);
      break;
    case HeadParse::Outcome::kRefused:
      Check(whole.status == 400 || whole.status == 414 || whole.status == 431 ||
            whole.status == 505);
      break;
    case HeadParse::Outcome::kIncomplete: Check(size < mt::http::kMaxHeadBytes); break;
  }
  // The same bytes cut anywhere: the first piece is incomplete, or already
  // what the whole says.
  if (size > 1) {
    const size_t cut = data[0] % size;
    mt::http::RequestHead first;
    const HeadParse part = mt::http::ParseRequestHead(bytes.substr(0, cut), first);
    if (part.outcome == HeadParse::Outcome::kComplete)
      Check(whole.outcome == HeadParse::Outcome::kComplete && part.head_bytes == whole.head_bytes);
    if (part.outcome == HeadParse::Outcome::kRefused)
      Check(whole.outcome == HeadParse::Outcome::kRefused && part.status == whole.status);
  }
  if (whole.outcome == HeadParse::Outcome::kComplete) {
    const mt::http::SnapshotFn snapshot = [] { return mt::StatusSnapshot{}; };
    for (const char* token : {"", "fuzz"}) {
      const mt::http::Response r = mt::http::DashboardResponse(head, token, snapshot);
      Check(r.status() >= 200 && r.status() < 600);
      Check(r.Head(head.keep_alive).size() < 4096);
    }
  }
  return 0;
}
