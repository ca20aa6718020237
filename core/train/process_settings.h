// What a training process computes with and writes, whatever its role:
// mthub (HubConfig), mtworker --standalone (StandaloneConfig) and mtworker
// --hub (WorkerConfig) each have these, for themselves.
#pragma once

#include <cstdint>
#include <string>

namespace mt {

struct ProcessSettings {
  int64_t threads = 1;      // compute threads
  std::string report_path;  // a JSON report when the run ends; "": none
  std::string trace_path;   // this process's Chrome trace of the run; "": none
};

}  // namespace mt
