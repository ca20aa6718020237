#include "core/util/stop_signal.h"

#include <chrono>
#include <csignal>

namespace mt {
namespace {

volatile std::sig_atomic_t g_signalled = 0;

extern "C" void OnStopSignal(int) { g_signalled = 1; }

}  // namespace

StopOnSignals::StopOnSignals(std::function<void()> on_stop) {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  watcher_ = std::thread([this, on_stop = std::move(on_stop)] {
    // A signal cannot notify a condition variable safely; a 50 ms poll is
    // far below anything a person or systemd notices.
    while (!done_.load()) {
      if (g_signalled) {
        on_stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

StopOnSignals::~StopOnSignals() {
  done_ = true;
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace mt
