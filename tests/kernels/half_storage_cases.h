// The op-table cases (backend_op_cases.h) of the 16-bit activation storage
// (kernels/half_storage.h): pack, and pack then widen, in both formats, on
// odd counts (the last element half used) and counts large enough to split.
// Included by backend_op_cases.h, after the harness it uses.
#pragma once

#include <string>
#include <vector>

#include "kernels/half_storage.h"

namespace mt::kernels::test_support {

inline void AddHalfStorage(Table& t) {
  for (const size_t n : std::vector<size_t>{1, 33, 70001}) {
    for (const HalfFormat format : {HalfFormat::kBf16, HalfFormat::kFp16}) {
      const std::string shape =
          std::to_string(n) + (format == HalfFormat::kBf16 ? " bf16" : " fp16");
      t.Add(kPackHalves.op(), shape, [n, format](CaseIo& io) {
        const View halves = io.Random(HalfElements(n), 71);
        kPackHalves(io.be(), io.Random(n, 70), halves, format);
        io.Keep("halves", halves, true);
      });
      t.Add(kUnpackHalves.op(), shape,
            [n, format](CaseIo& io) {
              const View halves = io.Random(HalfElements(n), 73), out = io.Random(n, 74);
              kPackHalves(io.be(), io.Random(n, 72), halves, format);
              kUnpackHalves(io.be(), halves, out, format);
              io.Keep("out", out);
            },
            {kPackHalves.op()});
    }
  }
}

}  // namespace mt::kernels::test_support
