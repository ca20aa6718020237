// How a run reads its data beyond the dataset's name, as mthub, mtworker
// --standalone and mtmodel eval are told on their command lines; a hub
// sends its own to its workers (JoinReply.data), so they read as it does.
#pragma once

#include "core/data/augment.h"
#include "core/data/dataset.h"
#include "core/data/partition.h"

namespace mt {

struct DataSettings {
  double test_fraction = -1;  // image folders without test/; <0: the default
  bool skip_bad_images = false;
  AugmentChoice augment;  // training samples only, never evaluation
  // mthub only: how the training set is split among the workers (iid: one
  // shared shuffle, each worker a slice of every step).
  PartitionSpec partition;
  // mthub with a partition: each worker's contribution weighs what its
  // share holds, not the samples of its batch. Equal batches from unequal
  // shares otherwise over-sample the small ones; so weighted, the average
  // is the whole set's gradient in expectation (FedAvg's weighting).
  bool weight_by_share = true;
};

inline DataOptions ReadOptions(const DataSettings& s, const Shape& input,
                               const PixelScaling& scaling = {}) {
  DataOptions o;
  o.input = input;
  o.scaling = scaling;
  o.test_fraction = s.test_fraction;
  o.skip_bad_images = s.skip_bad_images;
  return o;
}

}  // namespace mt
