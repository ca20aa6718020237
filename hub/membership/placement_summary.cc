#include "hub/membership/placement_summary.h"

#include <sstream>
#include <utility>
#include <vector>

namespace mt {

std::string PlacementSummary(const std::string& placement) {
  std::vector<std::pair<std::string, int>> counts;  // in order of first appearance
  std::istringstream parts(placement);
  for (std::string part; std::getline(parts, part, ',');) {
    const size_t colon = part.rfind(':');
    if (colon == std::string::npos) continue;
    const std::string device = part.substr(colon + 1);
    auto it = counts.begin();
    while (it != counts.end() && it->first != device) ++it;
    if (it == counts.end())
      counts.emplace_back(device, 1);
    else
      ++it->second;
  }
  if (counts.empty() || (counts.size() == 1 && counts[0].first == "cpu")) return "";
  std::string out;
  for (const auto& [device, n] : counts)
    out += (out.empty() ? "" : ", ") + device + " " + std::to_string(n);
  return out;
}

}  // namespace mt
