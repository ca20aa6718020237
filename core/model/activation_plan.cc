#include "core/model/activation_plan.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace mt {
namespace {

// A stretch of time [begin, end] (op indices, inclusive) during which a
// group's storage must hold it, and where that storage is.
enum class Copy { kForward, kReplayed, kPacked, kGradient };  // replayed: or widened

struct Lifetime {
  int group;
  Copy copy;
  int begin, end;
  size_t floats;
  int arena;
  size_t at = 0;
};

bool Overlap(const Lifetime& a, const Lifetime& b) {
  return a.arena == b.arena && a.begin <= b.end && b.begin <= a.end;
}

// Largest first, each at the lowest offset free for its whole lifetime.
std::vector<size_t> Place(std::vector<Lifetime>& lives, int arenas) {
  std::vector<size_t> order(lives.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return lives[a].floats != lives[b].floats ? lives[a].floats > lives[b].floats
                                              : lives[a].begin < lives[b].begin;
  });
  std::vector<size_t> arena_floats(arenas, 0);
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> taken;
  for (size_t i : order) {
    Lifetime& life = lives[i];
    taken.clear();
    for (size_t j : placed)
      if (Overlap(life, lives[j])) taken.emplace_back(lives[j].at, lives[j].at + lives[j].floats);
    std::sort(taken.begin(), taken.end());
    size_t at = 0;
    for (const auto& [begin, end] : taken) {
      if (begin >= at + life.floats) break;
      at = std::max(at, end);
    }
    life.at = at;
    arena_floats[life.arena] = std::max(arena_floats[life.arena], at + life.floats);
    placed.push_back(i);
  }
  return arena_floats;
}

}  // namespace

ActivationPlan PlanActivations(const ActivationGraph& graph) {
  const int n = static_cast<int>(graph.steps.size());
  ActivationPlan plan;
  plan.group.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    const ActivationGraph::Step& s = graph.steps[i];
    plan.group[i + 1] = s.in_place ? plan.group[s.inputs.at(0)] : i + 1;
  }
  auto backward_reads = [&](int i, const std::function<void(int)>& fn) {
    const ActivationGraph::Step& s = graph.steps[i];
    if (!s.runs_backward) return;
    if (s.backward_needs_input)
      for (int u : s.inputs) fn(u);
    if (s.backward_needs_output) fn(i + 1);
  };
  // A group is dropped when recomputation is on, every layer writing it
  // replays, and a backward step reads it (else nothing is saved).
  std::vector<char> replayable(n + 1, 1), read_back(n + 1, 0), dropped(n + 1, 0), exact(n + 1, 0);
  replayable[0] = 0;
  for (int i = 0; i < n; ++i) {
    const int g = plan.group[i + 1];
    replayable[g] = replayable[g] && graph.steps[i].replayable;
    backward_reads(i, [&](int u) { read_back[plan.group[u]] = 1; });
    if (graph.steps[i].exact_input && graph.steps[i].runs_backward)
      for (int u : graph.steps[i].inputs) exact[plan.group[u]] = 1;
  }
  const int logits = plan.group[n];
  for (int g = 1; g <= n; ++g)
    dropped[g] =
        graph.recompute && plan.group[g] == g && g != logits && replayable[g] && read_back[g];
  std::vector<char> packed(n + 1, 0);
  for (int g = 1; g <= n; ++g)
    packed[g] = graph.half && plan.group[g] == g && g != logits && !dropped[g] && read_back[g] &&
                !exact[g] && (graph.arena_packs.empty() || graph.arena_packs[graph.arena[g]]);

  // The forward pass: layer i runs at time i, the loss at n.
  std::vector<int> begin(n + 1, 0), end(n + 1, 0), replay_begin(n + 1, -1), replay_end(n + 1, -1);
  for (int i = 0; i < n; ++i) {
    begin[i + 1] = end[i + 1] = i;
    for (int u : graph.steps[i].inputs) end[plan.group[u]] = std::max(end[plan.group[u]], i);
    end[plan.group[i + 1]] = std::max(end[plan.group[i + 1]], i);
  }
  // A packed group is packed once its last forward reader has run.
  plan.packs.assign(n, {});
  std::vector<int> packed_begin(n + 1, -1), packed_end(n + 1, -1);
  for (int g = 1; g <= n; ++g)
    if (packed[g]) {
      packed_begin[g] = end[g];
      plan.packs[end[g]].push_back(g);
    }
  // The backward pass, replays and widenings first.
  plan.replays.assign(n, {});
  int t = n + 1;
  auto use = [&](int u, int when) {
    const int g = plan.group[u];
    int& last = dropped[g] || packed[g] ? replay_end[g] : end[g];
    last = std::max(last, when);
  };
  std::function<void(int, int)> ensure = [&](int u, int before) {
    const int g = plan.group[u];
    if (replay_begin[g] >= 0) return;
    if (packed[g]) {
      plan.replays[before].push_back(ReplayStep{ReplayStep::Kind::kWiden, g});
      packed_end[g] = replay_begin[g] = replay_end[g] = t++;
      return;
    }
    if (!dropped[g]) return;
    const ActivationGraph::Step& producer = graph.steps[g - 1];
    for (int v : producer.inputs) ensure(v, before);
    plan.replays[before].push_back(ReplayStep{ReplayStep::Kind::kForward, g - 1});
    replay_begin[g] = replay_end[g] = t;
    for (int v : producer.inputs) use(v, t);
    ++t;
    for (int i = g; i < n; ++i)  // the in-place layers over it, in order
      if (i + 1 != g && plan.group[i + 1] == g) {
        plan.replays[before].push_back(ReplayStep{ReplayStep::Kind::kForward, i});
        replay_end[g] = t++;
      }
  };
  std::vector<int> backward_at(n + 1, n);  // when each layer's backward step runs; n: the loss
  for (int i = n; i-- > 0;) {
    backward_reads(i, [&](int u) { ensure(u, i); });
    backward_reads(i, [&](int u) { use(u, t); });
    backward_at[i] = t++;
  }
  // The input and the logits outlast the step: a batch may be trained on
  // again, the logits read after the pass.
  end[0] = end[logits] = t;

  std::vector<size_t> floats(n + 1, 0);  // a group's: its largest value's
  for (int v = 0; v <= n; ++v)
    floats[plan.group[v]] = std::max(floats[plan.group[v]], graph.floats[v]);
  std::vector<Lifetime> lives;
  for (int g = 0; g <= n; ++g) {
    if (plan.group[g] != g) continue;
    const int arena = graph.arena[g];
    lives.push_back(Lifetime{g, Copy::kForward, begin[g], end[g], floats[g], arena});
    if (replay_begin[g] >= 0)
      lives.push_back(
          Lifetime{g, Copy::kReplayed, replay_begin[g], replay_end[g], floats[g], arena});
    if (packed_begin[g] >= 0)
      lives.push_back(
          Lifetime{g, Copy::kPacked, packed_begin[g], packed_end[g], (floats[g] + 1) / 2, arena});
  }
  for (size_t k = 0; k < graph.gradients.size(); ++k) {
    const ActivationGraph::Gradient& gr = graph.gradients[k];
    lives.push_back(Lifetime{static_cast<int>(k), Copy::kGradient, backward_at[gr.from],
                             gr.to < 0 ? t : backward_at[gr.to], gr.floats, gr.arena});
  }
  plan.arena_floats = Place(lives, graph.arenas);
  plan.gradient_at.assign(graph.gradients.size(), 0);
  std::vector<size_t> forward_at(n + 1, 0), replay_at(n + 1, 0), packed_at(n + 1, 0);
  for (const Lifetime& life : lives) {
    if (life.copy == Copy::kGradient) {
      plan.gradient_at[life.group] = life.at;
      continue;
    }
    (life.copy == Copy::kForward    ? forward_at
     : life.copy == Copy::kReplayed ? replay_at
                                    : packed_at)[life.group] = life.at;
  }
  plan.read_back.assign(n + 1, 0);
  plan.dropped.assign(n + 1, 0);
  plan.packed.assign(n + 1, 0);
  plan.forward_at.assign(n + 1, 0);
  plan.replay_at.assign(n + 1, 0);
  plan.packed_at.assign(n + 1, 0);
  for (int v = 0; v <= n; ++v) {
    const int g = plan.group[v];
    plan.read_back[v] = read_back[g];
    plan.dropped[v] = dropped[g];
    plan.packed[v] = packed[g];
    plan.forward_at[v] = forward_at[g];
    plan.replay_at[v] = replay_at[g];
    plan.packed_at[v] = packed_at[g];
  }
  return plan;
}

}  // namespace mt
