#include "hub/http/request_head.h"

#include <cctype>
#include <cstdint>

namespace mt::http {
namespace {

bool IsTokenChar(unsigned char c) {
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~': return true;
    default: return false;
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!IsTokenChar(c)) return false;
  return true;
}

// A field value: visible characters, spaces and tabs, and obs-text.
bool IsFieldValue(std::string_view s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  return true;
}

bool IsTarget(std::string_view s) {
  if (s.empty() || s.front() != '/') return false;
  for (unsigned char c : s)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Each comma-separated token of a Connection field.
template <class Fn>
void ForEachListItem(std::string_view list, Fn fn) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    fn(Trim(list.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

HeadParse Refuse(int status, std::string why) {
  HeadParse p;
  p.outcome = HeadParse::Outcome::kRefused;
  p.status = status;
  p.why = std::move(why);
  return p;
}

// A line of the head without its line end (LF, or CRLF).
std::string_view LineBody(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

HeadParse ParseRequestLine(std::string_view line, RequestHead& head, bool& keep_alive_default) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return Refuse(400, "malformed request line");
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return Refuse(400, "malformed method");
  if (!IsTarget(target)) return Refuse(400, "the target must be a path starting with /");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) ||
      !std::isdigit(static_cast<unsigned char>(version[7])))
    return Refuse(400, "malformed HTTP version");
  if (version[5] != '1') return Refuse(505, "HTTP/1.0 and HTTP/1.1 only");
  head.method.assign(method);
  const size_t q = target.find('?');
  head.path.assign(target.substr(0, q));
  head.query.assign(q == std::string_view::npos ? std::string_view() : target.substr(q + 1));
  head.minor_version = version[7] - '0';
  keep_alive_default = head.minor_version >= 1;
  return {};
}

// One header field into `head`; content_length tracks Content-Length seen.
HeadParse ParseField(std::string_view line, RequestHead& head, int64_t& content_length, bool& close,
                     bool& keep_alive) {
  if (line.front() == ' ' || line.front() == '\t')
    return Refuse(400, "folded header lines are not accepted");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || !IsToken(line.substr(0, colon)))
    return Refuse(400, "malformed header field");
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = Trim(line.substr(colon + 1));
  if (!IsFieldValue(value)) return Refuse(400, "control characters in a header field");
  if (EqualsIgnoringCase(name, "authorization")) {
    if (!head.authorization.empty()) return Refuse(400, "more than one Authorization field");
    head.authorization.assign(value);
  } else if (EqualsIgnoringCase(name, "content-length")) {
    if (value.empty() || value.size() > 18) return Refuse(400, "malformed Content-Length");
    int64_t n = 0;
    for (char c : value) {
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return Refuse(400, "malformed Content-Length");
      n = n * 10 + (c - '0');
    }
    if (content_length >= 0 && content_length != n)
      return Refuse(400, "conflicting Content-Length fields");
    content_length = n;
  } else if (EqualsIgnoringCase(name, "transfer-encoding")) {
    head.has_body = true;
  } else if (EqualsIgnoringCase(name, "connection")) {
    ForEachListItem(value, [&](std::string_view item) {
      if (EqualsIgnoringCase(item, "close")) close = true;
      if (EqualsIgnoringCase(item, "keep-alive")) keep_alive = true;
    });
  }
  return {};
}

}  // namespace

HeadParse ParseRequestHead(std::string_view bytes, RequestHead& head) {
  head = RequestHead{};
  const std::string_view window = bytes.substr(0, kMaxHeadBytes);
  size_t at = 0;
  // Stray line ends before the request line (after a previous body, say);
  // a few, so a stream of them cannot make each new byte rescan the lot.
  int empty_lines = 0;
  while (at < window.size() && (window[at] == '\r' || window[at] == '\n'))
    empty_lines += window[at++] == '\n';
  if (empty_lines > kMaxEmptyLinesFirst) return Refuse(400, "empty lines instead of a request");
  bool request_line_done = false, keep_alive_default = true, close = false, keep_alive = false;
  int64_t content_length = -1;
  size_t fields = 0;
  for (;;) {
    const size_t lf = window.find('\n', at);
    if (lf == std::string_view::npos) break;
    const std::string_view line = LineBody(window.substr(at, lf - at));
    at = lf + 1;
    if (!request_line_done) {
      HeadParse p = ParseRequestLine(line, head, keep_alive_default);
      if (p.outcome == HeadParse::Outcome::kRefused) return p;
      request_line_done = true;
      continue;
    }
    if (line.empty()) {
      head.has_body = head.has_body || content_length > 0;
      head.keep_alive = !close && (keep_alive_default || keep_alive);
      HeadParse done;
      done.outcome = HeadParse::Outcome::kComplete;
      done.head_bytes = at;
      return done;
    }
    if (++fields > kMaxHeaderFields) return Refuse(431, "too many header fields");
    HeadParse p = ParseField(line, head, content_length, close, keep_alive);
    if (p.outcome == HeadParse::Outcome::kRefused) return p;
  }
  if (window.size() < kMaxHeadBytes) return {};
  if (!request_line_done) return Refuse(414, "request line too long");
  return Refuse(431, "request head too large");
}

std::string QueryParameter(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      const std::string_view raw =
          eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
      std::string value;
      value.reserve(raw.size());
      for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '+') {
          value.push_back(' ');
        } else if (raw[i] == '%' && i + 2 < raw.size() && HexValue(raw[i + 1]) >= 0 &&
                   HexValue(raw[i + 2]) >= 0) {
          value.push_back(static_cast<char>(HexValue(raw[i + 1]) * 16 + HexValue(raw[i + 2])));
          i += 2;
        } else {
          value.push_back(raw[i]);
        }
      }
      return value;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

}  // namespace mt::http
