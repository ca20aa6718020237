// Fuzzes what a worker does with a hub's messages (worker/hub_session.h), as
// a hostile hub or anyone on the path could send them. The input's first
// byte picks the compression (bit 0: int8, else none), whether the
// script starts from a valid model (bit 1 clear: it does, so plans and
// results are reached) and whether the worker's updates are private (bit
// 2: clipped and noised, JoinReply.privacy, uncompressed); the rest is a script of HubMessages,
// each a 3-byte little-endian length and that many bytes of its wire form. Whatever the script, the
// worker must refuse it with an exception or end the session: never crash, touch memory it does not
// own, overflow or hang (-timeout).
//
// MT_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (tests/fuzz/corpus/
// worker_hub_messages_fuzz) and exits.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "tests/support/scripted_hub.h"

namespace {

using mt::proto::HubMessage;
using mt::test_support::ScriptedWorker;

// 750 parameters: a state is 3 KB, so inputs stay small and steps fast;
// the paths through the session are LeNet-5's.
constexpr const char* kTinyModel = R"(
name: "tiny"
input { channels: 1 height: 28 width: 28 }
layer { name: "conv" conv { filters: 2 kernel: 3 } }
layer { name: "relu" relu {} }
layer { name: "pool" maxpool { size: 4 } }
layer { name: "flatten" flatten {} }
layer { name: "fc" dense { units: 10 } }
)";

std::filesystem::path g_dir;
ScriptedWorker* g_plain = nullptr;
ScriptedWorker* g_int8 = nullptr;
ScriptedWorker* g_private = nullptr;

std::string Encode(uint8_t flags, const std::deque<HubMessage>& script) {
  std::string out(1, static_cast<char>(flags));
  for (const HubMessage& m : script) {
    const std::string bytes = m.SerializeAsString();
    out += static_cast<char>(bytes.size() & 0xFF);
    out += static_cast<char>((bytes.size() >> 8) & 0xFF);
    out += static_cast<char>((bytes.size() >> 16) & 0xFF);
    out += bytes;
  }
  return out;
}

// An honest hub's answer to a step: the average (here all zeros) in one
// segment, with the next step's plan.
HubMessage Result(const ScriptedWorker& w, int64_t next_step, int local_steps) {
  HubMessage m;
  auto* r = m.mutable_result();
  r->set_step(next_step - 1);
  r->set_offset(0);
  for (size_t i = 0; i < w.params(); ++i) r->add_values(0.0f);
  r->set_last(true);
  r->set_mean_loss(2.3);
  r->set_local_steps(local_steps);
  *r->mutable_plan() = ScriptedWorker::Plan(next_step, 8 * next_step, 8).plan();
  return m;
}

void WriteSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const ScriptedWorker& w = *g_plain;
  auto put = [&](const std::string& name, uint8_t flags, const std::deque<HubMessage>& s) {
    std::ofstream(dir + "/" + name, std::ios::binary) << Encode(flags, s);
  };
  // The valid state comes from flags bit 1 clear, so scripts omit it.
  put("steps", 0, {ScriptedWorker::Plan(0, 0, 8), Result(w, 1, 0), Result(w, 2, 0)});
  put("round", 0, {ScriptedWorker::Plan(0, 0, 8, 2, 16), Result(w, 2, 2)});
  HubMessage left;
  left.mutable_left_out()->set_step(0);
  left.mutable_left_out()->set_reason("deadline");
  put("left-out", 0, {ScriptedWorker::Plan(0, 0, 8), left, w.State()});
  HubMessage stop;
  stop.mutable_stop()->set_reason("training complete");
  put("stop", 0, {ScriptedWorker::Plan(0, 0, 8), stop});
  put("state-only", 2, {w.State()});
  put("int8-step", 1, {ScriptedWorker::Plan(0, 0, 8, 0, 0, mt::proto::COMPRESSION_INT8)});
  put("topk-step", 1, {ScriptedWorker::Plan(0, 0, 8, 0, 0, mt::proto::COMPRESSION_TOPK)});
  put("lowrank-step", 1, {ScriptedWorker::Plan(0, 0, 8, 0, 0, mt::proto::COMPRESSION_LOWRANK)});
  put("private-steps", 4, {ScriptedWorker::Plan(0, 0, 8), Result(w, 1, 0), Result(w, 2, 0)});
  put("private-round", 4, {ScriptedWorker::Plan(0, 0, 8, 2, 16), Result(w, 2, 2)});
  // Secure aggregation's messages to a worker whose hub never announced it.
  HubMessage holders;
  mt::proto::SecAggMember* holder = holders.mutable_secagg_holders()->add_holders();
  holder->set_worker_id(1);
  holder->set_box_key(std::string(32, '\x09'));
  put("secagg-unannounced", 0, {holders});
  HubMessage unmask;
  unmask.mutable_secagg_unmask()->add_survivors(0);
  unmask.mutable_secagg_unmask()->add_survivors(1);
  put("secagg-unmask", 0, {ScriptedWorker::Plan(0, 0, 8), unmask});
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  g_dir = std::filesystem::temp_directory_path() / ("mt-fuzz-worker-" + std::to_string(getpid()));
  const std::filesystem::path& dir = g_dir;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(g_dir, ec);
  });
  const mt::proto::ModelSpec tiny = mt::ParseModelSpec(kTinyModel, "the fuzzer's model");
  g_plain = new ScriptedWorker((dir / "plain").string(), "none", tiny);
  g_int8 = new ScriptedWorker((dir / "int8").string(), "int8", tiny);
  g_private = new ScriptedWorker((dir / "private").string(), "none", tiny);
  g_private->mutable_join().mutable_privacy()->set_clip(0.5);
  g_private->mutable_join().mutable_privacy()->set_noise_stddev(0.01);
  if (const char* seeds = std::getenv("MT_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(seeds);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  ScriptedWorker& w = (data[0] & 4) ? *g_private : (data[0] & 1) ? *g_int8 : *g_plain;
  std::deque<HubMessage> script;
  if (!(data[0] & 2)) script.push_back(w.State());
  size_t at = 1;
  while (at + 3 <= size) {
    const size_t n = data[at] | (size_t{data[at + 1]} << 8) | (size_t{data[at + 2]} << 16);
    at += 3;
    if (n > size - at) break;
    HubMessage m;
    if (m.ParseFromArray(data + at, static_cast<int>(n))) script.push_back(std::move(m));
    at += n;
  }
  try {
    w.Run(std::move(script));
  } catch (const std::exception&) {
    // A refusal is the right answer to a hostile script.
  }
  return 0;
}
