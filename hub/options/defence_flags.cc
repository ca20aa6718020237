#include "hub/options/hub_flag_sections.h"

#include <CLI/CLI.hpp>

#include "core/cli/choice_option.h"
#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "core/cli/validators.h"
#include "hub/options/dp_flags.h"

namespace mt {

using cli::Real;

void AddHostileWorkerFlags(CLI::App& app, HubConfig& cfg) {
  cli::Section(app, "Hostile workers");
  cli::AddChoice(app, "--aggregate", cfg.aggregate,
                 {{"auto", Aggregation::kAuto},
                  {"mean", Aggregation::kMean},
                  {"trimmed-mean", Aggregation::kTrimmedMean},
                  {"median", Aggregation::kMedian}},
                 "how the workers' gradients (or weight changes) are combined, segment by "
                 "segment: auto (each worker's norm clipped to --clip-factor times the step's "
                 "median; from 3 workers on, centred clipping around the coordinate-wise median, "
                 "the batch-weighted mean while nobody strays, and a worker whose contributions "
                 "keep pointing against the others', as a sign flip does, is dropped), mean "
                 "(exact, undefended), trimmed-mean or median (coordinate-wise, one vote per "
                 "worker). Whatever the choice, from 3 workers on a contribution over 100 times "
                 "the median norm is refused and its worker dropped; 2 workers cannot be told "
                 "apart (docs/security.md)");
  app.add_option("--clip-factor", cfg.clip_factor,
                 "--aggregate auto: clipping radius as a multiple of the step's median norm "
                 "and median distance to the centre")
      ->check(Real(1, 1e6));
}

void AddPrivacyFlags(CLI::App& app, HubConfig& cfg) {
  AddDpFlags(app, cfg.dp);
  cli::Section(app, "Privacy");
  app.add_flag("--secure-aggregation", cfg.secure_aggregation,
               "the hub learns only the sum of the workers' updates, never one worker's: each "
               "masks its update with pairwise masks that cancel in the sum (X25519, ChaCha20; a "
               "worker that drops mid-round is unmasked from its secret shares, held by the "
               "others, a majority of --workers needed). Updates travel dense (--compress auto "
               "becomes none; other encodings are refused); the per-worker defences of --aggregate "
               "cannot see masked updates and are off (trimmed-mean and median are refused); "
               "each value is clipped to +-16 by its worker; the end-of-run model check "
               "remains (docs/security.md)");
}

}  // namespace mt
