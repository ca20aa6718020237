// What the hub keeps of workers gone for good once their slots are freed:
// counts over the whole run and the rows of the most recent few, so the
// report, the dashboard and the hub's memory stay the same size however
// many workers come and go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "hub/membership/worker_row.h"

namespace mt {

struct DepartedWorkers {
  static constexpr size_t kListed = 32;

  int64_t workers = 0;           // that opened their stream, then went
  int64_t left = 0;              // of them, said Leave
  int64_t joins_unopened = 0;    // Joins whose stream never opened (expired)
  int64_t samples = 0;           // that the departed trained on, all together
  std::deque<WorkerRow> recent;  // the last kListed to go, oldest first

  void Add(WorkerRow row, bool said_leave) {
    ++workers;
    left += said_leave;
    samples += row.samples;
    if (recent.size() == kListed) recent.pop_front();
    recent.push_back(std::move(row));
  }
};

}  // namespace mt
