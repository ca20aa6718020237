// Text a peer sends the hub and the hub keeps (a worker's name and device,
// its placement, its Leave reason): each is bounded where the transport
// hands a request over, so megabytes from a peer cost the hub a few hundred
// bytes in its slots, report and log, and no byte of it can break the
// report's JSON or forge a log line. Tokens and session secrets are
// compared and dropped, never kept, and are left as they came.
#pragma once

#include <cstddef>
#include <string>

#include "hub.pb.h"

namespace mt {

constexpr size_t kMaxWorkerNameBytes = 128;   // DeviceInfo.name (mtworker --name)
constexpr size_t kMaxDeviceTextBytes = 256;   // DeviceInfo.opencl_device
constexpr size_t kMaxPlacementBytes = 4096;   // Hello.placement: a word per layer
constexpr size_t kMaxLeaveReasonBytes = 256;  // LeaveRequest.reason

// `text` in at most `max` bytes of valid UTF-8: a longer one is cut at a
// character boundary and ends in "..."; bytes that are not UTF-8 and
// control characters (a line break) become '?'.
std::string BoundedText(const std::string& text, size_t max);

// The request with each string the hub keeps bounded as above.
void BoundStrings(proto::JoinRequest* request);
void BoundStrings(proto::Hello* hello);
void BoundStrings(proto::LeaveRequest* request);

}  // namespace mt
