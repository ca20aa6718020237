// Real TLS handshakes over 127.0.0.1 between the hub's server credentials
// and the worker's channel credentials, in every way a worker can trust a
// hub. A call that reaches the service gets UNIMPLEMENTED (the test server
// implements nothing); one refused at the handshake never gets that far.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>

#include "hub.grpc.pb.h"
#include "tests/support/files.h"
#include "tls/certificate.h"
#include "tls/channel_credentials.h"
#include "tls/server_credentials.h"

namespace mt::tls {
namespace {

namespace fs = std::filesystem;

class TestHub {
 public:
  explicit TestHub(const ServerOptions& options) : security_(MakeServerSecurity(options)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", security_.credentials, &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~TestHub() { server_->Shutdown(std::chrono::system_clock::now()); }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  const ServerSecurity& security() const { return security_; }

 private:
  ServerSecurity security_;
  proto::Hub::Service service_;  // every method UNIMPLEMENTED
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// Whether a Join through `creds` reached the hub's service.
bool Reaches(const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& creds) {
  auto stub = proto::Hub::NewStub(grpc::CreateChannel(target, creds));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  proto::JoinRequest request;
  proto::JoinReply reply;
  return stub->Join(&context, request, &reply).error_code() == grpc::StatusCode::UNIMPLEMENTED;
}

class TlsHandshake : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_support::FreshTempDir("tls-handshake");
    hub_options_.state_dir = (dir_ / "hub-state").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  ClientOptions Tofu() const {
    ClientOptions c;
    c.known_hubs_path = (dir_ / "worker-state" / "known_hubs").string();
    return c;
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
  ServerOptions hub_options_;
};

TEST_F(TlsHandshake, TrustOnFirstUseRemembersTheHubAndRefusesAnotherCertificate) {
  TestHub hub(hub_options_);
  const ChannelSecurity first = MakeChannelSecurity(Tofu(), hub.address());
  ASSERT_TRUE(Reaches(hub.address(), first.credentials));
  EXPECT_EQ(first.check->refusal().why, "");
  const std::string known = test_support::ReadAll(Tofu().known_hubs_path);
  EXPECT_NE(known.find(hub.address() + " " + hub.security().fingerprint), std::string::npos)
      << known;
  // Another worker, later: the same hub is still trusted.
  EXPECT_TRUE(Reaches(hub.address(), MakeChannelSecurity(Tofu(), hub.address()).credentials));

  // A worker that remembers another certificate for this address refuses
  // the hub, and says how to accept the change.
  const std::string other = Fingerprint(GenerateSelfSigned("impostor", {}).cert_pem);
  ClientOptions remembers_other;
  remembers_other.known_hubs_path = Write("other_known_hubs", hub.address() + " " + other + "\n");
  const ChannelSecurity wary = MakeChannelSecurity(remembers_other, hub.address());
  EXPECT_FALSE(Reaches(hub.address(), wary.credentials));
  const HubCertificateCheck::Refusal refused = wary.check->refusal();
  EXPECT_EQ(refused.presented, hub.security().fingerprint);
  EXPECT_EQ(refused.expected, other);
  const std::string& why = refused.why;
  EXPECT_NE(why.find(remembers_other.known_hubs_path), std::string::npos) << why;
}

TEST_F(TlsHandshake, APinnedFingerprintAcceptsOnlyThatCertificate) {
  TestHub hub(hub_options_);
  ClientOptions pinned;
  pinned.hub_fingerprint = hub.security().fingerprint;
  EXPECT_TRUE(Reaches(hub.address(), MakeChannelSecurity(pinned, hub.address()).credentials));
  pinned.hub_fingerprint = Fingerprint(GenerateSelfSigned("impostor", {}).cert_pem);
  const ChannelSecurity wrong = MakeChannelSecurity(pinned, hub.address());
  EXPECT_FALSE(Reaches(hub.address(), wrong.credentials));
  EXPECT_EQ(wrong.check->refusal().presented, hub.security().fingerprint);
  EXPECT_EQ(wrong.check->refusal().expected, pinned.hub_fingerprint);
}

TEST_F(TlsHandshake, TheHubsOwnCertificateServesAsCaForTheNamesInIt) {
  TestHub hub(hub_options_);
  ClientOptions ca;
  ca.ca_path = hub.security().cert_path;
  EXPECT_TRUE(Reaches(hub.address(), MakeChannelSecurity(ca, hub.address()).credentials));
  const std::string by_name = "localhost:" + std::to_string(hub.port());
  EXPECT_TRUE(Reaches(by_name, MakeChannelSecurity(ca, by_name).credentials));
  // Another CA: refused.
  ca.ca_path = Write("other-ca.pem", GenerateSelfSigned("other", {"127.0.0.1"}).cert_pem);
  EXPECT_FALSE(Reaches(hub.address(), MakeChannelSecurity(ca, hub.address()).credentials));
}

TEST_F(TlsHandshake, ACaChecksTheNameDialled) {
  // A certificate naming nothing this machine is called.
  const CertificateAndKey nameless = GenerateSelfSigned("mthub", {"hub.invalid"});
  hub_options_.cert_path = Write("hub.pem", nameless.cert_pem);
  hub_options_.key_path = Write("hub.key", nameless.key_pem);
  TestHub hub(hub_options_);
  ClientOptions ca;
  ca.ca_path = hub_options_.cert_path;
  EXPECT_FALSE(Reaches(hub.address(), MakeChannelSecurity(ca, hub.address()).credentials));
  // Pinning needs no name.
  ClientOptions pinned;
  pinned.hub_fingerprint = Fingerprint(nameless.cert_pem);
  EXPECT_TRUE(Reaches(hub.address(), MakeChannelSecurity(pinned, hub.address()).credentials));
}

TEST_F(TlsHandshake, PlaintextAndTlsDoNotMix) {
  TestHub tls_hub(hub_options_);
  ClientOptions plain;
  plain.insecure = true;
  EXPECT_FALSE(
      Reaches(tls_hub.address(), MakeChannelSecurity(plain, tls_hub.address()).credentials));
  ServerOptions insecure;
  insecure.insecure = true;
  TestHub plain_hub(insecure);
  EXPECT_TRUE(plain_hub.security().fingerprint.empty());
  EXPECT_TRUE(
      Reaches(plain_hub.address(), MakeChannelSecurity(plain, plain_hub.address()).credentials));
  EXPECT_FALSE(
      Reaches(plain_hub.address(), MakeChannelSecurity(Tofu(), plain_hub.address()).credentials));
}

TEST_F(TlsHandshake, MutualTlsAdmitsOnlyWorkersWithACertificateFromTheClientCa) {
  const CertificateAndKey worker = GenerateSelfSigned("worker", {});
  const CertificateAndKey stranger = GenerateSelfSigned("stranger", {});
  hub_options_.client_ca_path = Write("clients.pem", worker.cert_pem);
  TestHub hub(hub_options_);
  EXPECT_TRUE(hub.security().mutual);

  ClientOptions with_cert = Tofu();
  with_cert.cert_path = Write("worker.pem", worker.cert_pem);
  with_cert.key_path = Write("worker.key", worker.key_pem);
  EXPECT_TRUE(Reaches(hub.address(), MakeChannelSecurity(with_cert, hub.address()).credentials));
  // The same through a CA-checked channel.
  ClientOptions ca_and_cert = with_cert;
  ca_and_cert.known_hubs_path.clear();
  ca_and_cert.ca_path = hub.security().cert_path;
  EXPECT_TRUE(Reaches(hub.address(), MakeChannelSecurity(ca_and_cert, hub.address()).credentials));

  EXPECT_FALSE(Reaches(hub.address(), MakeChannelSecurity(Tofu(), hub.address()).credentials));
  ClientOptions wrong_cert = Tofu();
  wrong_cert.cert_path = Write("stranger.pem", stranger.cert_pem);
  wrong_cert.key_path = Write("stranger.key", stranger.key_pem);
  EXPECT_FALSE(Reaches(hub.address(), MakeChannelSecurity(wrong_cert, hub.address()).credentials));
}

TEST_F(TlsHandshake, ContradictoryOrUnreadableOptionsAreRefusedBeforeConnecting) {
  ClientOptions both;
  both.ca_path = Write("ca.pem", GenerateSelfSigned("ca", {}).cert_pem);
  both.hub_fingerprint = Fingerprint(test_support::ReadAll(both.ca_path));
  EXPECT_THROW(MakeChannelSecurity(both, "127.0.0.1:1"), std::invalid_argument);
  ClientOptions insecure_pinned;
  insecure_pinned.insecure = true;
  insecure_pinned.hub_fingerprint = both.hub_fingerprint;
  EXPECT_THROW(MakeChannelSecurity(insecure_pinned, "127.0.0.1:1"), std::invalid_argument);
  ClientOptions missing;
  missing.ca_path = (dir_ / "absent.pem").string();
  EXPECT_THROW(MakeChannelSecurity(missing, "127.0.0.1:1"), std::invalid_argument);
  ClientOptions bad_pin;
  bad_pin.hub_fingerprint = "SHA256:12:34";
  EXPECT_THROW(MakeChannelSecurity(bad_pin, "127.0.0.1:1"), std::invalid_argument);
  ServerOptions half;
  half.cert_path = both.ca_path;
  EXPECT_THROW(MakeServerSecurity(half), std::invalid_argument);
}

}  // namespace
}  // namespace mt::tls
