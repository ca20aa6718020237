#include "core/util/json.h"

#include <cmath>
#include <cstdio>

namespace mt {
namespace {

void Quote(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

}  // namespace

Json& Json::Set(const std::string& key, Json value) {
  for (auto& m : members_)
    if (m.first == key) {
      m.second = std::move(value);
      return *this;
    }
  members_.emplace_back(key, std::move(value));
  return *this;
}

Json& Json::Push(Json value) {
  members_.emplace_back(std::string(), std::move(value));
  return *this;
}

std::string Json::Dump() const {
  std::string out;
  DumpTo(out, 0);
  out += '\n';
  return out;
}

void Json::DumpTo(std::string& out, int depth) const {
  const std::string pad(2 * (depth + 1), ' ');
  switch (kind_) {
    case kNull: out += "null"; break;
    case kBool: out += integer_ ? "true" : "false"; break;
    case kInteger: out += std::to_string(integer_); break;
    case kNumber: {
      if (!std::isfinite(number_)) { out += "null"; break; }  // JSON has no NaN/Inf
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.10g", number_);
      out += buf;
      break;
    }
    case kString: Quote(out, text_); break;
    case kObject:
    case kArray: {
      const bool obj = kind_ == kObject;
      out += obj ? '{' : '[';
      for (size_t i = 0; i < members_.size(); ++i) {
        out += i ? ",\n" : "\n";
        out += pad;
        if (obj) {
          Quote(out, members_[i].first);
          out += ": ";
        }
        members_[i].second.DumpTo(out, depth + 1);
      }
      if (!members_.empty()) out += "\n" + std::string(2 * depth, ' ');
      out += obj ? '}' : ']';
      break;
    }
  }
}

}  // namespace mt
