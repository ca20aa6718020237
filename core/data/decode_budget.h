// Memory a decoder must hold for a whole picture at once: a progressive
// JPEG's coefficients (its scans refine every block in turn) and an
// interlaced PNG's pixels (seven passes over the picture). Streaming
// decoders hold a row; these hold the picture, and a folder is decoded one
// file per core, so they share one budget for the process: a picture that
// needs more than all of it is refused, and the others wait for their turn.
#pragma once

#include <cstdint>
#include <string>

namespace mt {

constexpr uint64_t kWholeImageBudget = uint64_t{256} << 20;

// Holds a share of the budget until destroyed. Made empty (before a C
// library's setjmp, so a longjmp past it skips no destructor), then Take.
class WholeImageHold {
 public:
  WholeImageHold() = default;
  ~WholeImageHold();
  WholeImageHold(const WholeImageHold&) = delete;
  WholeImageHold& operator=(const WholeImageHold&) = delete;
  // Waits until `bytes` fit beside the other holds. Throws DataError naming
  // `path` and `what` ("a progressive JPEG's coefficients") when they
  // could never fit.
  void Take(uint64_t bytes, const std::string& path, const std::string& what);

 private:
  uint64_t bytes_ = 0;
};

}  // namespace mt
