// Fuzzes the ONNX importer (model_io/onnx_import.h) as mtmodel and mthub
// --model meet a file: any bytes must import or be refused with OnnxError,
// within OnnxImportLimits (-rss_limit_mb catches one that is not). The
// seeds are issue 32's hostile files, scaled down (nested Concats, a
// constant through Identity nodes, unnamed chains, non-finite and empty
// weights), and two models mt exports.
//
// MT_FUZZ_WRITE_SEEDS=DIR writes the seed corpus and exits.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "core/model/model_spec.h"
#include "model_io/onnx_export.h"
#include "model_io/onnx_import.h"
#include "tests/modeltool/hostile_onnx.h"
#include "tests/modeltool/model_io_fixtures.h"

namespace {

void WriteSeeds(const std::string& dir) {
  namespace hostile = mt::hostile_onnx;
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
  };
  write("concat-bomb", hostile::ConcatBomb(8).SerializeAsString());
  write("identity-copies", hostile::IdentityCopies(1024, 64).SerializeAsString());
  write("unnamed-chain", hostile::UnnamedChain(100).SerializeAsString());
  write("nan-weight", hostile::NonFiniteWeight(std::nanf("")).SerializeAsString());
  write("inf-weight",
        hostile::NonFiniteWeight(std::numeric_limits<float>::infinity()).SerializeAsString());
  write("empty-wide-weight", hostile::EmptyWideWeight(int64_t{1} << 30).SerializeAsString());
  for (const char* spec : {mt::test_support::kDenseChainSpec, mt::test_support::kResidualSpec}) {
    const mt::proto::ModelSpec s = mt::ParseModelSpec(spec, "seed");
    write(s.name(), mt::ExportOnnxBytes(s, mt::test_support::RandomWeights(s, 1)));
  }
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
    (void)mt::ImportOnnxBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const mt::OnnxError&) {
    // Refused with a reason: the right answer.
  }
  return 0;
}
