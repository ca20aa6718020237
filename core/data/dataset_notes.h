// What a run says about its training set before training starts: every
// picture left out for not decoding (by name, as many as the cache keeps,
// then a count), the files of formats mt does not read, the links not
// followed. Surprises in a user's own folder are said, never silent.
#pragma once

#include <string>
#include <vector>

#include "core/data/dataset.h"

namespace mt {

// One line each, prefixed with `dataset`; empty when there is nothing to say.
std::vector<std::string> DatasetNotes(const std::string& dataset, const DatasetInfo& info);

}  // namespace mt
