#include "tls/tls_flags.h"

#include <CLI/CLI.hpp>

#include "core/cli/command_line.h"
#include "tls/certificate.h"

namespace mt::tls {
namespace {

void AddInsecure(CLI::App& app, bool& insecure, const std::string& what) {
  app.add_flag("--insecure", insecure,
               "plaintext gRPC instead of TLS: " + what +
                   " in clear for anyone on the network to read or alter (trusted networks and "
                   "debugging only)");
}

// An option naming a PEM file that must exist.
void AddPemFile(CLI::App& app, const std::string& flag, std::string& path,
                const std::string& help) {
  // Without a description, so --help shows no "[FILE]" after the text.
  app.add_option(flag, path, help)
      ->type_name("FILE")
      ->check(CLI::Validator(CLI::ExistingFile).description(""));
}

void AddCertAndKey(CLI::App& app, std::string& cert, std::string& key,
                   const std::string& cert_help) {
  AddPemFile(app, "--tls-cert", cert, cert_help + "; with --tls-key");
  AddPemFile(app, "--tls-key", key, "the private key of --tls-cert (PEM, unencrypted)");
}

}  // namespace

void AddServerFlags(CLI::App& app, ServerOptions& options) {
  AddInsecure(app, options.insecure, "weights, gradients and the token travel");
  AddCertAndKey(app, options.cert_path, options.key_path,
                "the hub's certificate (PEM, chain allowed) instead of the one it makes and keeps "
                "in --state-dir");
  AddPemFile(app, "--tls-client-ca", options.client_ca_path,
             "mutual TLS: only workers presenting a certificate signed by this CA (PEM) may "
             "connect");
  app.add_option("--state-dir", options.state_dir,
                 "where the hub keeps the TLS certificate it makes on first start (hub-cert.pem, "
                 "hub-key.pem), so workers recognise it after a restart (default: $MT_STATE_DIR, "
                 "else ~/.mt)")
      ->type_name("DIR");
}

void AddClientFlags(CLI::App& app, ClientOptions& options) {
  AddInsecure(app, options.insecure, "gradients, weights and the token travel");
  AddPemFile(app, "--tls-ca", options.ca_path,
             "trust the hub when its certificate chains to this CA (PEM) and names the address "
             "dialled; the hub's own hub-cert.pem works as one");
  app.add_option("--hub-fingerprint", options.hub_fingerprint,
                 "trust only the hub certificate with this SHA-256 fingerprint, as mthub prints "
                 "it. Without this or --tls-ca, the first fingerprint seen for an address is "
                 "remembered in --state-dir/known_hubs and a different one later refused")
      ->option_text("SHA256:AB:CD:..");  // not type_name: a ':' there would split it
  AddCertAndKey(app, options.cert_path, options.key_path,
                "mutual TLS: this worker's certificate (PEM), for a hub with --tls-client-ca");
  app.add_option_function<std::string>(
         "--state-dir",
         [&options](const std::string& dir) { options.known_hubs_path = dir + "/known_hubs"; },
         "where the worker remembers the hubs it has met (known_hubs) (default: $MT_STATE_DIR, "
         "else ~/.mt)")
      ->type_name("DIR");
}

void CheckClientFlags(ClientOptions& options) {
  const bool identity = !options.cert_path.empty() || !options.key_path.empty();
  if (options.insecure &&
      (!options.ca_path.empty() || !options.hub_fingerprint.empty() || identity))
    throw cli::UsageError(
        "--insecure turns TLS off; it cannot go with --tls-ca, --hub-fingerprint, --tls-cert or "
        "--tls-key");
  if (!options.ca_path.empty() && !options.hub_fingerprint.empty())
    throw cli::UsageError("--tls-ca and --hub-fingerprint are two ways to trust the hub; give one");
  if (options.cert_path.empty() != options.key_path.empty())
    throw cli::UsageError("--tls-cert and --tls-key go together: give both or neither");
  if (!options.hub_fingerprint.empty()) {
    try {
      options.hub_fingerprint = NormalizeFingerprint(options.hub_fingerprint);
    } catch (const std::invalid_argument& e) {
      throw cli::UsageError(std::string("--hub-fingerprint: ") + e.what());
    }
  }
}

void CheckServerFlags(const ServerOptions& options) {
  if (options.insecure &&
      (!options.cert_path.empty() || !options.key_path.empty() || !options.client_ca_path.empty()))
    throw cli::UsageError(
        "--insecure turns TLS off; it cannot go with --tls-cert, --tls-key or --tls-client-ca");
  if (options.cert_path.empty() != options.key_path.empty())
    throw cli::UsageError("--tls-cert and --tls-key go together: give both or neither");
}

}  // namespace mt::tls
