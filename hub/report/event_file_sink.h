// mthub --events FILE: the hub's membership and run events as JSON lines,
// passed on to another sink as well (tests in-process use both). Per-step
// events are left out of the file: a line per step says nothing the
// report does not, and would grow without bound.
#pragma once

#include <string>

#include "core/util/event_file.h"
#include "hub/report/hub_events.h"

namespace mt {

class EventFileSink final : public HubEventSink {
 public:
  EventFileSink(const std::string& path, HubEventSink* next) : file_(path), next_(next) {}

  void OnEvent(const HubEvent& e) override {
    if (next_) next_->OnEvent(e);
    if (e.kind == HubEvent::Kind::kStepPublished || e.kind == HubEvent::Kind::kStepDone) return;
    nlohmann::ordered_json fields;
    fields["step"] = e.step;
    if (e.worker >= 0) fields["worker"] = e.worker;
    if (!e.worker_name.empty()) fields["name"] = e.worker_name;
    if (!e.detail.empty()) fields["detail"] = e.detail;
    file_.Write(EventName(e.kind), std::move(fields));
  }

 private:
  EventFile file_;
  HubEventSink* next_;
};

}  // namespace mt
