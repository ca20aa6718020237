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
// With 16-bit storage (ActivationGraph::half), a kept group that a backward
// step reads is packed into 16 bits (half its floats, rounded up) just
// after its last forward reader has run; its float copy is then free for
// later values. Before the first backward step that reads it, it is widened
// back into floats at a place of its own, as a replay would write it, and
// held until its last backward reader. So the value the backward pass reads
// is the forward's rounded to 16 bits; the forward pass itself, the loss,
// and everything read only in the forward pass stay exact. Not packed: the
// model's input (a batch may be trained on again) and the logits (the loss
// and the predictions read them after the pass), groups recomputation
// drops (their replay is exact), groups a step with exact_input reads (batch
// norm: its backward subtracts the batch mean from its input, and that
// difference is all a 16-bit input would lose), and groups on an arena whose
// backend lacks the pack ops (OpenCL). A half-sized value holds its place in floats per
// sample rounded up to a whole float: (floats + 1) / 2.
//
// The gradient buffers of the backward pass take their places in the same
// arenas, each for its own stretch of the backward pass, so they reuse what
// the forward pass's values have left.
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
    bool exact_input = false;  // its backward needs its inputs in floats (never packed)
    bool replayable = false;   // may be run again to recompute its output
  };
  std::vector<Step> steps;
  std::vector<size_t> floats;  // per value, per sample
  std::vector<int> arena;      // per value: which backend's arena holds it
  int arenas = 1;
  bool recompute = false;
  bool half = false;              // keep read-back values in 16 bits
  std::vector<char> arena_packs;  // per arena: its backend packs (empty: all do)
  // Gradient buffers of the backward pass, in the same arenas: each is
  // written first by layer `from`'s backward step (the layer count: by the
  // loss) and read last by layer `to`'s (-1: until the step ends).
  struct Gradient {
    size_t floats;
    int arena;
    int from, to;
  };
  std::vector<Gradient> gradients;
};

// One thing the backward pass does before a layer's backward step: run a
// layer's forward again (recomputation), or widen a packed value.
struct ReplayStep {
  enum class Kind { kForward, kWiden };
  Kind kind;
  int index;  // kForward: the layer; kWiden: the value (its group)
};

struct ActivationPlan {
  std::vector<int> group;          // per value: its storage group (the value that owns it)
  std::vector<char> read_back;     // per value: a backward step reads it (its group)
  std::vector<char> dropped;       // per value: not kept for the backward pass
  std::vector<size_t> forward_at;  // per value: offset during the forward pass
  std::vector<size_t> replay_at;   // per value: offset of its replayed or widened copy
  std::vector<char> packed;        // per value: kept in 16 bits between the passes
  std::vector<size_t> packed_at;   // per value: offset of its 16-bit copy (packed ones)
  // Per layer: the groups to pack once its forward has run.
  std::vector<std::vector<int>> packs;
  std::vector<size_t> gradient_at;  // per ActivationGraph::gradients entry: its offset
  // Per layer: what to replay or widen, in order, before its backward.
  std::vector<std::vector<ReplayStep>> replays;
  std::vector<size_t> arena_floats;  // per arena: floats per sample
};

ActivationPlan PlanActivations(const ActivationGraph& graph);

}  // namespace mt
