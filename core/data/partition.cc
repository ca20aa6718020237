#include "core/data/partition.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/data/sampler.h"
#include "core/util/rng.h"

namespace mt {
namespace {

// Gamma(shape, 1) by Marsaglia and Tsang, boosted below shape 1.
double Gamma(Rng& rng, double shape) {
  if (shape < 1) {
    const double u = std::max(rng.Uniform(), 1e-300);
    return Gamma(rng, shape + 1) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x, v;
    do {
      // A standard normal by Box-Muller.
      const double u1 = std::max(rng.Uniform(), 1e-300), u2 = rng.Uniform();
      x = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rng.Uniform();
    if (std::log(std::max(u, 1e-300)) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

// n split by `weights` into integers that sum to n (largest remainders).
std::vector<uint32_t> Apportion(uint32_t n, const std::vector<double>& weights) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<uint32_t> out(weights.size());
  std::vector<std::pair<double, size_t>> rest;
  uint32_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const double exact = sum > 0 ? n * weights[i] / sum : static_cast<double>(n) / weights.size();
    out[i] = static_cast<uint32_t>(std::floor(exact));
    given += out[i];
    rest.push_back({exact - out[i], i});
  }
  std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t k = 0; given < n; ++k, ++given) ++out[rest[k % rest.size()].second];
  return out;
}

}  // namespace

std::string PartitionSpec::ToString() const {
  switch (kind) {
    case Kind::kIid: return "iid";
    case Kind::kDirichlet: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "dirichlet:%g", alpha);
      return buf;
    }
    case Kind::kClasses: return "classes:" + std::to_string(classes);
  }
  return "iid";
}

PartitionSpec ParsePartition(const std::string& text) {
  PartitionSpec s;
  if (text == "iid") return s;
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon),
                    value = colon == std::string::npos ? "" : text.substr(colon + 1);
  const std::string usage = "'" + text + "': expected iid, dirichlet:ALPHA (e.g. 0.5) or classes:K";
  size_t used = 0;
  try {
    if (kind == "dirichlet") {
      s.kind = PartitionSpec::Kind::kDirichlet;
      s.alpha = std::stod(value, &used);
      if (used != value.size() || !(s.alpha > 0) || s.alpha > 1e6)
        throw std::invalid_argument(usage);
      return s;
    }
    if (kind == "classes") {
      s.kind = PartitionSpec::Kind::kClasses;
      s.classes = std::stoi(value, &used);
      if (used != value.size() || s.classes < 1) throw std::invalid_argument(usage);
      return s;
    }
  } catch (const std::logic_error&) {
  }
  throw std::invalid_argument(usage);
}

uint64_t ClassShare::total() const {
  return std::accumulate(count.begin(), count.end(), uint64_t{0});
}

std::vector<ClassShare> DrawPartition(const std::vector<uint16_t>& labels, int classes, int workers,
                                      const PartitionSpec& spec, uint64_t seed) {
  if (workers < 1 || classes < 1)
    throw std::invalid_argument("DrawPartition: no workers or classes");
  std::vector<uint32_t> per_class(static_cast<size_t>(classes), 0);
  for (uint16_t l : labels) ++per_class.at(l);
  std::vector<ClassShare> shares(static_cast<size_t>(workers));
  for (ClassShare& s : shares)
    s.start.assign(per_class.size(), 0), s.count.assign(per_class.size(), 0);
  Rng rng(seed * 0xD1B54A32D192ED03ull + 17);
  // A draw that leaves a worker nothing to train on is drawn again.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    for (int c = 0; c < classes; ++c) {
      std::vector<double> weights(static_cast<size_t>(workers), 1.0);
      if (spec.kind == PartitionSpec::Kind::kDirichlet) {
        for (double& w : weights) w = Gamma(rng, spec.alpha);
      } else if (spec.kind == PartitionSpec::Kind::kClasses) {
        // Worker w holds classes w*K .. w*K+K-1 (mod classes): every class
        // has a holder when workers * K >= classes.
        for (int w = 0; w < workers; ++w) {
          bool holds = false;
          for (int k = 0; k < spec.classes; ++k) holds |= (w * spec.classes + k) % classes == c;
          weights[static_cast<size_t>(w)] = holds ? 1.0 : 0.0;
        }
        if (std::all_of(weights.begin(), weights.end(), [](double w) { return w == 0; }))
          throw std::invalid_argument("--partition classes:" + std::to_string(spec.classes) + ": " +
                                      std::to_string(workers) + " workers holding " +
                                      std::to_string(spec.classes) + " classes each leave class " +
                                      std::to_string(c) + " of " + std::to_string(classes) +
                                      " to nobody");
      }
      const std::vector<uint32_t> counts = Apportion(per_class[static_cast<size_t>(c)], weights);
      uint32_t at = 0;
      for (int w = 0; w < workers; ++w) {
        shares[static_cast<size_t>(w)].start[static_cast<size_t>(c)] = at;
        shares[static_cast<size_t>(w)].count[static_cast<size_t>(c)] =
            counts[static_cast<size_t>(w)];
        at += counts[static_cast<size_t>(w)];
      }
    }
    if (std::all_of(shares.begin(), shares.end(),
                    [](const ClassShare& s) { return s.total() > 0; }))
      return shares;
  }
  throw std::invalid_argument("--partition " + spec.ToString() + ": no draw gives each of " +
                              std::to_string(workers) + " workers a sample of the " +
                              std::to_string(labels.size()));
}

std::vector<uint32_t> PartitionIndices(const std::vector<uint16_t>& labels, int classes,
                                       const ClassShare& share, uint64_t seed) {
  // The share comes from the hub: every index is checked before use.
  if (share.start.size() != share.count.size())
    throw std::invalid_argument("partition share with " + std::to_string(share.start.size()) +
                                " starts for " + std::to_string(share.count.size()) + " counts");
  std::vector<std::vector<uint32_t>> by_class(static_cast<size_t>(classes));
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < classes) by_class[labels[i]].push_back(static_cast<uint32_t>(i));
  std::vector<uint32_t> out;
  for (int c = 0; c < classes && c < static_cast<int>(share.count.size()); ++c) {
    const auto& members = by_class[static_cast<size_t>(c)];
    // The class's fixed shuffle: integers only (sampler.h).
    const std::vector<uint32_t> order = EpochOrder(members.size(), seed ^ 0xC1A55u, c);
    const size_t begin = share.start[static_cast<size_t>(c)],
                 n = share.count[static_cast<size_t>(c)];
    if (begin + n > members.size())
      throw std::invalid_argument("partition share beyond class " + std::to_string(c) + "'s " +
                                  std::to_string(members.size()) + " samples");
    for (size_t k = begin; k < begin + n; ++k) out.push_back(members[order[k]]);
  }
  return out;
}

}  // namespace mt
