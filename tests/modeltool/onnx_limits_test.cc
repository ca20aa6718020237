// Hostile ONNX files (issue 32) refused before they take the memory they
// ask for, each in a child process whose peak memory is measured and whose
// address space is capped, so that an importer without the limits fails
// the test with std::bad_alloc instead of exhausting the machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "model_io/onnx_import.h"
#include "model_io/onnx_wire_scan.h"
#include "model_io/run_model.h"
#include "model_io/unique_names.h"
#include "tests/modeltool/hostile_onnx.h"
#include "tests/support/child_memory.h"
#include "tests/support/files.h"

namespace mt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// What the child reports: 0 refused with an OnnxError holding `expected`,
// 1 imported, 2 refused otherwise, 3 another exception (std::bad_alloc).
constexpr int kRefused = 0, kImported = 1, kRefusedOtherwise = 2, kOtherException = 3;

int ImportInChild(const std::string& bytes, const std::string& expected) {
  try {
    ImportOnnxBytes(bytes, "hostile.onnx");
    return kImported;
  } catch (const OnnxError& e) {
    if (std::string(e.what()).find(expected) != std::string::npos) return kRefused;
    std::fprintf(stderr, "refused otherwise: %s\n", e.what());
    return kRefusedOtherwise;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kOtherException;
  }
}

std::string ImportError(const std::string& bytes) {
  try {
    ImportOnnxBytes(bytes, "hostile.onnx");
  } catch (const OnnxError& e) {
    return e.what();
  }
  ADD_FAILURE() << "imported";
  return "";
}

// The child may grow by 3 GB before its allocations fail.
constexpr long kChildCapMb = 3072;

TEST(OnnxLimits, NestedConcatsAreRefusedBeforeTheyGrow) {
  // 8 levels: 16^8 values, 34 GB asked for by a file of a few hundred bytes.
  const std::string bytes = hostile_onnx::ConcatBomb(8).SerializeAsString();
  EXPECT_LT(bytes.size(), 2000u);
  const auto child = test_support::RunInChild(
      [&] { return ImportInChild(bytes, "Concat node 'cat"); }, kChildCapMb);
  EXPECT_EQ(child.exit_code, kRefused);
  EXPECT_LT(child.peak_growth_mb, 700);  // the constants' budget, 512 MiB, and change
  EXPECT_THAT(ImportError(bytes), AllOf(HasSubstr("hostile.onnx: Concat node 'cat"),
                                        HasSubstr("GB"), HasSubstr("already taken")));
}

TEST(OnnxLimits, AnIdentityOfAConstantSharesIt) {
  // 4 MB through 3,000 Identity nodes: 12 GB as copies, 4 MB shared.
  const std::string bytes = hostile_onnx::IdentityCopies(1 << 20, 3000).SerializeAsString();
  const auto child = test_support::RunInChild(
      [&] {
        try {
          const LoadedModel m = ImportOnnxBytes(bytes, "copies.onnx");
          return m.weights && m.weights->params.size() == (1u << 20) + (1u << 16) ? 0 : 1;
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s\n", e.what());
          return 2;
        }
      },
      kChildCapMb);
  EXPECT_EQ(child.exit_code, 0);
  EXPECT_LT(child.peak_growth_mb, 200);
}

TEST(OnnxLimits, AMillionLayersAreRefusedBeforeTheParse) {
  // The graph's nodes as repeated occurrences of its field, which protobuf
  // merges: a Flatten, a million Relu, the dense head, 30 MB in all.
  onnx::ModelProto head = hostile_onnx::UnnamedChain(0);
  std::string bytes = head.SerializeAsString();
  const auto append_varint = [](std::string& s, uint64_t v) {
    for (; v >= 0x80; v >>= 7) s += static_cast<char>(v | 0x80);
    s += static_cast<char>(v);
  };
  std::string nodes;
  onnx::NodeProto relu;
  relu.set_op_type("Relu");
  relu.add_input();
  relu.add_output();
  constexpr int kLayers = 1000000;
  for (int k = 0; k < kLayers; ++k) {
    relu.set_name("r" + std::to_string(k));
    relu.set_input(0, "t" + std::to_string(k));
    relu.set_output(0, "t" + std::to_string(k + 1));
    const std::string node = relu.SerializeAsString();
    nodes += static_cast<char>((onnx::GraphProto::kNodeFieldNumber << 3) | 2);
    append_varint(nodes, node.size());
    nodes += node;
  }
  // The chain's own dense head reads t0; the last Relu's output feeds a
  // second one, which the graph's output names.
  onnx::GraphProto tail;
  auto& gemm = *tail.add_node();
  gemm = head.graph().node(1);
  gemm.set_name("fc2");
  gemm.set_input(0, "t" + std::to_string(kLayers));
  gemm.set_output(0, "z");
  tail.add_output()->set_name("z");
  nodes += tail.SerializeAsString();
  // Drop the head's own output, so that z is the only one.
  head.mutable_graph()->clear_output();
  head.mutable_graph()->mutable_node()->RemoveLast();
  bytes = head.SerializeAsString();
  bytes += static_cast<char>((onnx::ModelProto::kGraphFieldNumber << 3) | 2);
  append_varint(bytes, nodes.size());
  bytes += nodes;
  EXPECT_EQ(ScanOnnxWire(bytes).nodes, kLayers + 2);
  const auto child =
      test_support::RunInChild([&] { return ImportInChild(bytes, "1000002 nodes"); }, kChildCapMb);
  EXPECT_EQ(child.exit_code, kRefused);
  EXPECT_LT(child.peak_growth_mb, 100);
}

TEST(OnnxLimits, WeightsWithoutValuesCannotAskForGigabytes) {
  // [2^30, 0]: nothing in the file, 2^30 zero weights and biases to make.
  const std::string bytes = hostile_onnx::EmptyWideWeight(int64_t{1} << 30).SerializeAsString();
  const auto child =
      test_support::RunInChild([&] { return ImportInChild(bytes, "Gemm node 'fc'"); }, kChildCapMb);
  EXPECT_EQ(child.exit_code, kRefused);
  EXPECT_LT(child.peak_growth_mb, 100);
  EXPECT_THAT(ImportError(bytes), AllOf(HasSubstr("its weights"), HasSubstr("parameters")));
}

TEST(OnnxLimits, LayersSharingOneWeightAreChargedEach) {
  // Twelve dense layers read one [16, 16] weight: 12 x 272 parameters.
  onnx::ModelProto m = hostile_onnx::Model();
  hostile_onnx::Node(m, "Flatten", "flat", {"x"}, "t0");
  const std::vector<float> w(256, 0.1f);
  *m.mutable_graph()->add_initializer() = FloatTensor("w", {16, 16}, w.data());
  for (int k = 0; k < 12; ++k)
    hostile_onnx::Node(m, "MatMul", "mm" + std::to_string(k), {"t" + std::to_string(k), "w"},
                       "t" + std::to_string(k + 1));
  hostile_onnx::DenseHead(m, "t12", "fc.weight", 2);
  const std::string bytes = m.SerializeAsString();
  EXPECT_NO_THROW(ImportOnnxBytes(bytes, "shared.onnx"));
  OnnxImportLimits limits;
  limits.max_params = 10 * 272;
  try {
    ImportOnnxBytes(bytes, "shared.onnx", limits);
    ADD_FAILURE() << "imported";
  } catch (const OnnxError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("MatMul node 'mm10'"), HasSubstr("272 parameters"),
                                HasSubstr("2720 parameters already taken")));
  }
}

TEST(OnnxLimits, TheNodeCapHoldsForAGraphParsedAlready) {
  OnnxImportLimits limits;
  limits.max_nodes = 100;
  const std::string bytes = hostile_onnx::UnnamedChain(100).SerializeAsString();
  try {
    ImportOnnxBytes(bytes, "chain.onnx", limits);
    ADD_FAILURE() << "imported";
  } catch (const OnnxError& e) {
    EXPECT_THAT(e.what(), HasSubstr("chain.onnx: the graph has 102 nodes, more than the 100"));
  }
  limits.max_nodes = 102;
  EXPECT_NO_THROW(ImportOnnxBytes(bytes, "chain.onnx", limits));
}

TEST(OnnxLimits, AFileLargerThanTheLimitIsNotRead) {
  OnnxImportLimits limits;
  limits.max_file_bytes = 100;
  const std::string bytes = hostile_onnx::UnnamedChain(10).SerializeAsString();
  try {
    ImportOnnxBytes(bytes, "big.onnx", limits);
    ADD_FAILURE() << "imported";
  } catch (const OnnxError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("big.onnx"), HasSubstr("more than the 100 bytes")));
  }
}

TEST(OnnxLimits, NonFiniteWeightsAreRefusedNamingTheTensor) {
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    const std::string error = ImportError(hostile_onnx::NonFiniteWeight(bad).SerializeAsString());
    EXPECT_THAT(error, AllOf(HasSubstr("initializer 'fc.weight'"), HasSubstr("value #19"),
                             HasSubstr(std::isnan(bad) ? "NaN" : "infinite")));
  }
  // A double that is finite but not as a float.
  onnx::ModelProto m = hostile_onnx::NonFiniteWeight(0.0f);
  auto& w = *m.mutable_graph()->mutable_initializer(0);
  w.clear_raw_data();
  w.set_data_type(onnx::TensorProto::DOUBLE);
  for (int i = 0; i < 32; ++i) w.add_double_data(i == 5 ? 1e300 : 0.01);
  EXPECT_THAT(ImportError(m.SerializeAsString()),
              AllOf(HasSubstr("'fc.weight'"), HasSubstr("value #5 is infinite")));
  // A NaN attribute.
  m = hostile_onnx::NonFiniteWeight(0.0f);
  auto& leaky = hostile_onnx::Node(m, "LeakyRelu", "leaky", {"y"}, "z");
  auto* alpha = leaky.add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(std::nanf(""));
  m.mutable_graph()->mutable_output(0)->set_name("z");
  EXPECT_THAT(ImportError(m.SerializeAsString()),
              AllOf(HasSubstr("LeakyRelu node 'leaky'"), HasSubstr("'alpha' is not finite")));
}

// mthub --model and mtworker --standalone load through LoadRunModel.
TEST(OnnxLimits, ARunRefusesNonFiniteWeightsToo) {
  const auto dir = test_support::FreshTempDir("onnx-limits-run");
  const std::string path = (dir / "nan.onnx").string();
  std::ofstream(path, std::ios::binary)
      << hostile_onnx::NonFiniteWeight(std::nanf("")).SerializeAsString();
  try {
    LoadRunModel(path, FineTuning{});
    ADD_FAILURE() << "loaded";
  } catch (const OnnxError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("'fc.weight'"), HasSubstr("NaN")));
  }
  std::filesystem::remove_all(dir);
}

TEST(OnnxLimits, UnnamedLayersAreNamedInLinearWork) {
  UniqueNames names;
  constexpr int kNodes = 100000;
  EXPECT_EQ(names.Take("relu"), "relu");
  for (int k = 2; k <= kNodes; ++k) ASSERT_EQ(names.Take("relu"), "relu_" + std::to_string(k));
  EXPECT_EQ(names.collisions(), kNodes - 1);  // one a name; a search from "_2" made 5e9
  // Names taken out of turn are each passed over once, and a name that
  // looks like a suffixed one is a base of its own.
  UniqueNames mixed;
  for (const char* n : {"conv", "conv_2", "conv_4", "conv_2_2"}) EXPECT_EQ(mixed.Take(n), n);
  EXPECT_EQ(mixed.Take("conv"), "conv_3");
  EXPECT_EQ(mixed.Take("conv"), "conv_5");
  EXPECT_EQ(mixed.Take("conv_2"), "conv_2_3");
  EXPECT_EQ(mixed.collisions(), 2 + 2 + 2);
}

TEST(OnnxLimits, AGraphOfSixtyThousandUnnamedNodesImports) {
  // Quadratic naming took 5 s for 10k such nodes and minutes for these.
  const std::string bytes = hostile_onnx::UnnamedChain(60000).SerializeAsString();
  const LoadedModel m = ImportOnnxBytes(bytes, "chain.onnx");
  ASSERT_EQ(m.spec.layer_size(), 60002);
  EXPECT_EQ(m.spec.layer(60000).name(), "relu_60000");
}

TEST(OnnxLimits, TheWireScanBoundsTheParse) {
  for (const onnx::ModelProto& m :
       {hostile_onnx::UnnamedChain(7), hostile_onnx::IdentityCopies(1 << 16, 40)}) {
    const std::string bytes = m.SerializeAsString();
    const OnnxWireScan scan = ScanOnnxWire(bytes);
    EXPECT_TRUE(scan.readable);
    EXPECT_EQ(scan.nodes, m.graph().node_size());
    EXPECT_GE(scan.parsed_bytes, static_cast<int64_t>(m.SpaceUsedLong()));
    EXPECT_LT(scan.parsed_bytes, 2 * static_cast<int64_t>(m.SpaceUsedLong()) + 4096);
    EXPECT_EQ(ScanOnnxWire(bytes + bytes).nodes, 2 * m.graph().node_size());  // merged
    EXPECT_FALSE(ScanOnnxWire(bytes.substr(0, bytes.size() / 2)).readable);
  }
  EXPECT_TRUE(ScanOnnxWire("").readable);
}

TEST(OnnxLimits, InputNamesThatGrowInTheParseAreRefusedBeforeIt) {
  // 30M one-letter inputs: 90 MB on the wire, some 1.7 GB parsed.
  onnx::ModelProto m = hostile_onnx::UnnamedChain(0);
  std::string node;
  for (int i = 0; i < 30000000; ++i)
    node +=
        "\x0a\x01"
        "a";  // input: "a"
  std::string bytes = m.SerializeAsString();
  const auto varint = [](std::string& s, uint64_t v) {
    for (; v >= 0x80; v >>= 7) s += static_cast<char>(v | 0x80);
    s += static_cast<char>(v);
  };
  std::string graph;
  graph += static_cast<char>((onnx::GraphProto::kNodeFieldNumber << 3) | 2);
  varint(graph, node.size());
  graph += node;
  bytes += static_cast<char>((onnx::ModelProto::kGraphFieldNumber << 3) | 2);
  varint(bytes, graph.size());
  bytes += graph;
  node.clear();
  graph.clear();
  const auto child = test_support::RunInChild(
      [&] { return ImportInChild(bytes, "once parsed, more than the 1.6 GB"); }, kChildCapMb);
  EXPECT_EQ(child.exit_code, kRefused);
  EXPECT_LT(child.peak_growth_mb, 100);
  // One node with more inputs than any op takes, under the parse limit.
  m = hostile_onnx::UnnamedChain(1);
  for (int i = 0; i < 65; ++i) m.mutable_graph()->mutable_node(1)->add_input("t0");
  EXPECT_THAT(ImportError(m.SerializeAsString()),
              AllOf(HasSubstr("Relu node '' (#1)"), HasSubstr("66 inputs, more than the 64")));
}

}  // namespace
}  // namespace mt
