// Central differences of a whole model's training loss (the mean over one
// synthetic batch, with the batch's statistics) against the gradients its
// ComputeGradients gives, parameter by parameter (gradient_check.h).
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "core/model/model.h"
#include "core/train/batch_buffer.h"
#include "tests/support/gradient_check.h"
#include "tests/support/synthetic_dataset.h"

namespace mt::test_support {

inline void CheckModelGradients(Model& model, int n, uint64_t init_seed, uint64_t data_seed,
                                const CheckOptions& o) {
  model.Reserve(n);
  model.InitParams(init_seed);
  SyntheticDataset data(n, model.input_shape(), model.num_classes(), data_seed);
  std::vector<uint32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0u);
  BatchBuffer batch(data.SampleShape(), n);
  batch.Fill(data, idx.data(), n);
  model.SetBatch(batch.images(), batch.labels(), n);
  std::vector<float> params(model.ParamCount()), grads(model.ParamCount());
  model.GetParams(params.data());
  model.ComputeGradients(1);
  model.GetGrads(grads.data());
  CompareDerivatives(
      "all parameters", params, grads,
      [&](const std::vector<float>& v) { model.SetParams(v.data()); },
      [&]() { return model.ComputeGradients(1) / n; }, o, 300);
}

}  // namespace mt::test_support
