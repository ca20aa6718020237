#include "hub/membership/network_strings.h"

#include <algorithm>

namespace mt {
namespace {

// The length of the well-formed UTF-8 character at s[i] (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), 0 if none starts
// there.
size_t CharLength(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = at(0);
  if (lead < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(1) < lo || at(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((at(k) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string BoundedText(const std::string& text, size_t max) {
  static constexpr size_t kMarkBytes = 3;  // "..."
  const bool cut = text.size() > max;      // replacing keeps the length
  const size_t room = cut ? max - std::min(max, kMarkBytes) : text.size();
  std::string out;
  out.reserve(std::min(text.size(), max));
  for (size_t i = 0; i < text.size();) {
    size_t n = CharLength(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    const bool bad = n == 0 || (n == 1 && (c < 0x20 || c == 0x7F));
    if (bad) n = 1;
    if (out.size() + n > room) break;
    if (bad)
      out += '?';
    else
      out.append(text, i, n);
    i += n;
  }
  if (cut) out.append(std::min(max, kMarkBytes), '.');
  return out;
}

void BoundStrings(proto::JoinRequest* request) {
  proto::DeviceInfo* device = request->mutable_device();
  device->set_name(BoundedText(device->name(), kMaxWorkerNameBytes));
  device->set_opencl_device(BoundedText(device->opencl_device(), kMaxDeviceTextBytes));
}

void BoundStrings(proto::Hello* hello) {
  hello->set_placement(BoundedText(hello->placement(), kMaxPlacementBytes));
}

void BoundStrings(proto::LeaveRequest* request) {
  request->set_reason(BoundedText(request->reason(), kMaxLeaveReasonBytes));
}

}  // namespace mt
