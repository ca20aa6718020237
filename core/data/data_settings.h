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
};

inline DataOptions ReadOptions(const DataSettings& s, const Shape& input) {
  DataOptions o;
  o.input = input;
  o.test_fraction = s.test_fraction;
  o.skip_bad_images = s.skip_bad_images;
  return o;
}

}  // namespace mt
