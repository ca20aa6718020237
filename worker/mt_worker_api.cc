// The C API (worker/mt_worker.h) over RunWorker and WorkerControl: a thread
// per worker, exceptions turned into status text at this boundary.
#include "worker/mt_worker.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "worker/hub_connection.h"
#include "worker/worker_config.h"
#include "worker/worker_config_from_c.h"
#include "worker/worker_control.h"

struct mt_worker {
  mt::WorkerConfig config;
  mt::WorkerControl control;
  std::thread thread;
  std::mutex mu;
  std::condition_variable ended_cv;
  bool ended = false;
};

namespace {

void CopyText(const std::string& from, char* to, size_t size) {
  if (!to || size == 0) return;
  const size_t n = std::min(from.size(), size - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

void RunThread(mt_worker* w) {
  try {
    mt::RunWorker(w->config, w->control);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    w->control.Fail(e.what());
  } catch (...) {
    w->control.Fail("unknown error");
  }
  std::lock_guard<std::mutex> lock(w->mu);
  w->ended = true;
  w->ended_cv.notify_all();
}

}  // namespace

extern "C" {

void mt_worker_config_init(mt_worker_config* c) {
  if (!c) return;
  std::memset(c, 0, sizeof *c);
  c->struct_size = sizeof *c;
  c->read_system_device_state = 1;
}

mt_worker* mt_worker_start(const mt_worker_config* c, char* error, size_t error_size) {
  CopyText("", error, error_size);
  try {
    auto w = std::make_unique<mt_worker>();
    w->config = mt::WorkerConfigFromC(c);
    const mt::WorkerConfig& cfg = w->config;
    // Contradictions and unreadable files now, as an error, rather than as
    // a failed worker later.
    mt::tls::MakeChannelSecurity(cfg.tls, mt::HubTarget(cfg.hub));
    mt_worker* raw = w.get();
    raw->thread = std::thread(RunThread, raw);
    return w.release();
  } catch (const std::exception& e) {
    CopyText(e.what(), error, error_size);
  } catch (...) {
    CopyText("unknown error", error, error_size);
  }
  return nullptr;
}

int mt_worker_poll(const mt_worker* w, mt_worker_status* s) {
  if (!w || !s || s->struct_size < sizeof(mt_worker_status)) return -1;
  const mt::WorkerStatus st = w->control.Snapshot();
  s->state = static_cast<int>(st.state);
  s->step = st.step;
  s->steps_trained = st.steps_trained;
  s->loss = st.loss;
  s->batch = st.batch;
  s->test_accuracy = st.test_accuracy;
  CopyText(st.last_error, s->last_error, sizeof s->last_error);
  CopyText(st.stop_reason, s->stop_reason, sizeof s->stop_reason);
  return 0;
}

void mt_worker_set_device_state(mt_worker* w, const mt_device_state* d) {
  if (!w || !d) return;
  mt::DeviceState s;
  s.battery_percent =
      d->battery_percent >= 0 && d->battery_percent <= 100 ? d->battery_percent : -1;
  s.charging = d->charging < 0 ? -1 : d->charging != 0;
  s.unmetered = d->unmetered < 0 ? -1 : d->unmetered != 0;
  s.temperature_c = d->temperature_c > -1000 ? d->temperature_c : NAN;
  w->control.PushDeviceState(s);
}

int mt_worker_stop(mt_worker* w, double timeout_seconds) {
  if (!w) return 0;
  w->control.RequestStop("stopped by the app");
  std::unique_lock<std::mutex> lock(w->mu);
  const auto limit = std::chrono::duration<double>(std::max(0.0, timeout_seconds));
  return w->ended_cv.wait_for(lock, limit, [&] { return w->ended; }) ? 0 : -1;
}

void mt_worker_free(mt_worker* w) {
  if (!w) return;
  w->control.RequestStop("stopped by the app");
  if (w->thread.joinable()) w->thread.join();
  delete w;
}

const char* mt_worker_state_name(int state) {
  if (state < 0 || state > static_cast<int>(mt::WorkerState::kFailed)) return "unknown";
  return mt::WorkerStateName(static_cast<mt::WorkerState>(state));
}

}  // extern "C"
