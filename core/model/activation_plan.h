// Where each activation lives during a training step, planned once over the
// step's timeline (forward of every layer, the loss, then the backward pass
// with any replays before each backward step), so that values whose
// lifetimes do not overlap share memory.
//
// A value lives from its producer's forward until its last reader: its last
// forward reader, or the last backward step that reads it (a layer's input
// when Layer::BackwardNeedsInput, its output when BackwardNeedsOutput, and
// only for layers that run a backward pass). In-place layers share their
// input's storage: a value and the in-place values over it form one storage
// group with one lifetime.
//
// With recomputation, a group whose producers are all Layer::Replayable is
// not kept between forward and backward: the backward pass replays its
// producers, from kept values or other replayed ones, just before the first
// backward step that reads it, into a place of its own in the same arena.
// Each dropped group is replayed at most once per step.
//
// Offsets are in floats per sample: a value's bytes at batch capacity C are
// [offset * C, (offset + size) * C) of its backend's arena, so one plan
// serves every capacity.
#pragma once

#include <cstddef>
#include <vector>

namespace mt {

struct ActivationGraph {
  struct Step {               // one layer; its output is value index + 1
    std::vector<int> inputs;  // value ids (0: the model's input)
    bool in_place = false;    // its output is its only input's storage
    bool runs_backward = false;
    bool backward_needs_input = true;
    bool backward_needs_output = true;
    bool replayable = false;  // may be run again to recompute its output
  };
  std::vector<Step> steps;
  std::vector<size_t> floats;  // per value, per sample
  std::vector<int> arena;      // per value: which backend's arena holds it
  int arenas = 1;
  bool recompute = false;
};

struct ActivationPlan {
  std::vector<int> group;          // per value: its storage group (the value that owns it)
  std::vector<char> dropped;       // per value: not kept for the backward pass
  std::vector<size_t> forward_at;  // per value: offset during the forward pass
  std::vector<size_t> replay_at;   // per value: offset of its replayed copy (dropped ones)
  // Per layer: the layers to run forward again, in order, before its backward.
  std::vector<std::vector<int>> replays;
  std::vector<size_t> arena_floats;  // per arena: floats per sample
};

ActivationPlan PlanActivations(const ActivationGraph& graph);

}  // namespace mt
