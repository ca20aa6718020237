#include "model_io/onnx_attributes.h"

#include <vector>

namespace mt {

float ScalarOf(const OnnxNode& n, const OnnxConstant& c, const std::string& role) {
  if (!c.is_float || c.count() != 1) n.Fail(role + " must be a FLOAT scalar");
  return c.floats[0];
}

int SquareAttr(const OnnxNode& n, const char* name, int fallback) {
  const std::vector<int64_t> v = n.Ints(name);
  if (v.empty()) return fallback;
  if (v.size() != 2 || v[0] != v[1] || v[0] < 1 || v[0] > (1 << 16))
    n.Fail(std::string("attribute '") + name + "' must be two equal positive sizes (square), got " +
           DimsText(v));
  return static_cast<int>(v[0]);
}

void CheckDilations(const OnnxNode& n) {
  for (int64_t d : n.Ints("dilations"))
    if (d != 1)
      n.Fail("dilations other than 1 are not supported, got " + DimsText(n.Ints("dilations")));
}

int SymmetricPadding(const OnnxNode& n) {
  const std::string auto_pad = n.String("auto_pad", "NOTSET");
  const std::vector<int64_t> pads = n.Ints("pads");
  if (auto_pad == "VALID") {
    for (int64_t p : pads)
      if (p != 0) n.Fail("auto_pad VALID with non-zero pads");
    return 0;
  }
  if (auto_pad != "NOTSET")
    n.Fail("auto_pad " + auto_pad + " is not supported (only NOTSET with explicit pads, or VALID)");
  if (pads.empty()) return 0;
  if (pads.size() != 4 || pads[0] != pads[1] || pads[0] != pads[2] || pads[0] != pads[3] ||
      pads[0] < 0)
    n.Fail("only equal padding on all four sides is supported, got pads " + DimsText(pads));
  return static_cast<int>(pads[0]);
}

}  // namespace mt
