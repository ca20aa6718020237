// A hub and workers as threads in this process over loopback: the
// integration tests' cluster. Each runs to the end of the hub's run.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "hub/hub.h"
#include "tests/support/files.h"
#include "worker/worker_config.h"
#include "worker/worker_control.h"

namespace mt::test_support {

// Trains `hc` on the dataset in `dir` with `workers` workers named w0, w1,
// ...; returns the hub's report (written to dir/hub.json) and, when asked,
// its final weights. Worker i reports to dir/w<i>.json; `tweak`, if given,
// changes its config first; `decorate`, if given, wraps each worker's link
// to the hub (worker/hub_link.h).
inline nlohmann::json TrainInProcess(HubConfig hc, const std::filesystem::path& dir, int workers,
                                     std::vector<float>* weights = nullptr,
                                     const std::function<void(int, WorkerConfig&)>& tweak = nullptr,
                                     const HubLinkDecorator& decorate = nullptr) {
  hc.workers = workers;
  hc.bind = "127.0.0.1";
  hc.port = 0;
  hc.dataset = dir.string();
  hc.report_path = (dir / "hub.json").string();
  Hub hub(hc);
  hub.Start();
  int hub_code = -1;
  std::thread hub_thread([&] { hub_code = hub.Run(); });
  std::vector<std::thread> threads;
  std::vector<int> codes(workers, -1);
  for (int i = 0; i < workers; ++i)
    threads.emplace_back([&, i] {
      WorkerConfig wc;
      wc.hub = "127.0.0.1:" + std::to_string(hub.port());
      wc.name = "w" + std::to_string(i);
      wc.connect_timeout_seconds = 30;
      wc.report_path = (dir / ("w" + std::to_string(i) + ".json")).string();
      if (tweak) tweak(i, wc);
      WorkerControl control;
      codes[i] = RunWorker(wc, control, decorate);
    });
  for (auto& t : threads) t.join();
  hub_thread.join();
  EXPECT_EQ(hub_code, 0);
  EXPECT_EQ(codes, std::vector<int>(workers, 0));
  if (weights) *weights = hub.Weights();
  return ReadJson(dir / "hub.json");
}

}  // namespace mt::test_support
