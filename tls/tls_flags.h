// The TLS flags of mthub and mtworker, defined once beside what they set.
#pragma once

#include "tls/tls_options.h"

namespace CLI {
class App;
}

namespace mt::tls {

// --insecure, --tls-cert, --tls-key, --tls-client-ca, --state-dir.
void AddServerFlags(CLI::App& app, ServerOptions& options);

// --insecure, --tls-ca, --hub-fingerprint, --tls-cert, --tls-key,
// --state-dir (its known_hubs file, into options.known_hubs_path).
void AddClientFlags(CLI::App& app, ClientOptions& options);

// After parsing: contradictions between the client flags (--insecure with
// any certificate flag, --tls-ca with --hub-fingerprint, --tls-cert without
// --tls-key) and a malformed --hub-fingerprint (normalised in place), as
// cli::UsageError.
void CheckClientFlags(ClientOptions& options);
// The same for the server flags.
void CheckServerFlags(const ServerOptions& options);

}  // namespace mt::tls
