// The reference every distributed run is held to: one process training
// LeNet-5 with a run's default optimizer (RunDefaultOptimizer: HubConfig's)
// on `batch` samples per step, in the
// epoch order every worker shares.
#pragma once

#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/model/model_spec.h"
#include "core/optim/optimizer.h"
#include "core/train/batch_buffer.h"
#include "kernels/cpu/cpu_backend.h"

namespace mt::test_support {

// The weights after `steps` steps from the initial weights of `seed`.
inline std::vector<float> SingleProcess(const std::string& data, uint64_t seed, int batch,
                                        int steps) {
  kernels::CpuBackend backend(1);
  auto model = BuildModel(LoadModelSpec("lenet5"), backend);
  model->Reserve(batch);
  model->InitParams(seed);
  const OptimizerConfig oc = RunDefaultOptimizer();  // as HubConfig's
  auto opt = MakeOptimizer(oc, backend, model->ParamCount());
  auto train = LoadDataset(data, Split::kTrain);
  BatchBuffer b(train->SampleShape(), batch);
  const auto order = EpochOrder(train->Size(), seed, 0);
  for (int s = 0; s < steps; ++s) {
    b.Fill(*train, order.data() + s * batch, batch);
    model->SetBatch(b.images(), b.labels(), batch);
    model->ComputeGradients(s);
    opt->Step(model->params(), model->grads());
  }
  std::vector<float> w(model->ParamCount());
  model->GetParams(w.data());
  return w;
}

}  // namespace mt::test_support
