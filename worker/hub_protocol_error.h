// A message from the hub that this worker refuses (malformed, out of turn,
// out of range): the session ends; the worker rejoins, a few times. Its own
// header so the pieces a session uses (secure_update.h) can throw it
// without reaching up to the session.
#pragma once

#include <stdexcept>

namespace mt {

struct HubProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace mt
