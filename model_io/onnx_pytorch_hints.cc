#include "model_io/onnx_pytorch_hints.h"

#include <set>

namespace mt {

const char kExportInEvalMode[] =
    "the model was exported in training mode; call model.eval() before torch.onnx.export "
    "(with training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False to keep batch "
    "norm unfolded)";

std::string PyTorchHints(const onnx::GraphProto& graph) {
  std::set<std::string> ops;
  for (const onnx::NodeProto& n : graph.node()) ops.insert(n.op_type());
  std::string hints;
  if (ops.count("Softmax") || ops.count("LogSoftmax"))
    hints +=
        "\nSoftmax or LogSoftmax: a torch.softmax (or log_softmax) at the end of forward(). mt "
        "trains on logits and its loss applies softmax itself: export the model without it "
        "(return the logits), and apply softmax to the output where you need probabilities";
  if (ops.count("Erf"))
    hints +=
        "\nErf (with the Div, Add and Mul around it): nn.GELU or F.gelu, which mt has no layer "
        "for: use nn.SiLU, nn.Hardswish or nn.ReLU in its place (they import), fine-tune, and "
        "export again";
  if (ops.count("Tanh") && ops.count("Pow"))
    hints +=
        "\nPow with Tanh: GELU(approximate='tanh'), which mt has no layer for: use nn.SiLU, "
        "nn.Hardswish or nn.ReLU in its place, fine-tune, and export again";
  return hints;
}

}  // namespace mt
