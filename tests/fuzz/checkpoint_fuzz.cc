// Fuzzes the checkpoint reader (core/checkpoint/checkpoint.h) past its
// checksum: the input is a checkpoint's body (a proto::Checkpoint in wire
// form), framed here with the magic, version and a correct CRC-32, so the
// fuzzer explores the decoding and the content checks rather than the
// checksum. It must load or throw CheckpointError: nothing else.
//
// MT_FUZZ_WRITE_SEEDS=DIR writes the seed corpus and exits.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/checkpoint/checkpoint.h"

namespace {

std::string Frame(const std::string& body) {
  std::string out = "MTCK";
  auto u32 = [&out](uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
  };
  u32(mt::kCheckpointVersion);
  out += body;
  u32(static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(out.data()), static_cast<uInt>(out.size()))));
  return out;
}

void WriteSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  mt::Checkpoint c;
  c.model_spec = "name: \"lenet5\"";
  c.step = 938;
  c.epoch = 1;
  c.seed = 1;
  c.weights = {0.5f, -0.25f, 1.0f, 0.0f};
  c.optimizer.config.kind = mt::OptimizerKind::kSgd;
  c.optimizer.steps = 938;
  c.optimizer.slots = {0.1f, 0.2f, 0.3f, 0.4f};
  const std::string whole = mt::EncodeCheckpoint(c);
  std::ofstream(dir + "/sgd", std::ios::binary) << whole.substr(8, whole.size() - 12);
  c.optimizer.config.kind = mt::OptimizerKind::kAdam;
  c.optimizer.slots.resize(8, 0.01f);
  const std::string adam = mt::EncodeCheckpoint(c);
  std::ofstream(dir + "/adam", std::ios::binary) << adam.substr(8, adam.size() - 12);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seeds = std::getenv("MT_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(seeds);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    mt::DecodeCheckpoint(Frame(std::string(reinterpret_cast<const char*>(data), size)), "fuzz");
  } catch (const mt::CheckpointError&) {
    // Refused with a reason: the right answer.
  }
  return 0;
}
