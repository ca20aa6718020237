#include "hub/options/hub_flag_sections.h"

#include <CLI/CLI.hpp>

#include "core/cli/command_line.h"
#include "core/cli/common_options.h"
#include "core/cli/validators.h"
#include "tls/tls_flags.h"

namespace mt {

using cli::Integer;

void AddClusterFlags(CLI::App& app, HubOptions& options) {
  HubConfig& cfg = options.config;
  cli::Section(app, "Cluster");
  app.add_option("--workers", cfg.workers, "workers to wait for before training starts")
      ->transform(Integer(1, 4096));
  app.add_option("--min-workers", cfg.min_workers,
                 "below this many workers the hub waits instead of training on")
      ->transform(Integer(1, 4096));
  app.add_option("--max-workers", cfg.max_workers,
                 "refuse joins beyond this many workers in the run at once")
      ->transform(Integer(1, 65536))
      ->default_str("twice --workers, at least 64");
  app.add_option("--bind", cfg.bind, "address to listen on")->type_name("ADDRESS");
  app.add_option("--port", cfg.port, "port to listen on (0: any free port)")
      ->transform(Integer(0, 65535));
  app.add_option("--port-file", options.port_file,
                 "write the port actually bound here once listening (with --port 0)")
      ->type_name("FILE");
  // The struct's default is 0 (no dashboard, for hubs in tests); mthub's is 8080.
  cfg.http.port = 8080;
  app.add_option("--http-port", cfg.http.port,
                 "serve the live dashboard (/), Prometheus metrics (/metrics) and the same as JSON "
                 "(/api/status) on this port of --http-bind, over HTTPS with the hub's TLS "
                 "certificate, read-only, behind the token if the hub has one (0: off; if the "
                 "default port is taken the hub warns and runs without it, a port named here must "
                 "be free)")
      ->transform(Integer(0, 65535));
  app.add_option("--http-bind", cfg.http.bind,
                 "address the dashboard listens on (default 127.0.0.1: this machine only; "
                 "0.0.0.0 for every interface)")
      ->type_name("ADDRESS");
  app.add_flag("--http-plain", cfg.http.plain,
               "serve the dashboard over plain HTTP instead of HTTPS (as it is under --insecure): "
               "the token travels in clear");
  app.add_option("--linger", options.linger,
                 "after the run, keep serving its final state on the dashboard for SECONDS, or "
                 "until SIGINT/SIGTERM with 'forever', before exiting")
      ->type_name("SECONDS|forever")
      ->transform(cli::IntegerOr("forever", -1, 0, 1 << 30))
      ->default_str("0");
  app.add_option("--serve-report", options.serve_report,
                 "train nothing: show a finished run's --report FILE as the dashboard (on "
                 "--http-port, --http-bind) until SIGINT/SIGTERM")
      ->type_name("FILE");
}

void AddSecurityFlags(CLI::App& app, HubConfig& cfg, cli::TokenSources& token) {
  cli::Section(app, "Security");
  cli::AddToken(app, token, "shared secret workers must present");
  tls::AddServerFlags(app, cfg.tls);
}

}  // namespace mt
