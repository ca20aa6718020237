// What the hub keeps (its certificate, made once) and what a worker keeps
// (the hubs it has met), including several processes' worth of threads at
// once.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "tests/support/files.h"
#include "tls/certificate.h"
#include "tls/hub_identity.h"
#include "tls/known_hubs.h"

namespace mt::tls {
namespace {

namespace fs = std::filesystem;

TEST(HubIdentity, MadeOnceKeptAcrossStartsWithAPrivateKey) {
  const fs::path dir = test_support::FreshTempDir("tls-identity");
  ServerOptions options;
  options.state_dir = (dir / "state").string();
  const HubIdentity first = LoadOrCreateHubIdentity(options);
  EXPECT_TRUE(first.created);
  const HubIdentity again = LoadOrCreateHubIdentity(options);
  EXPECT_FALSE(again.created);
  EXPECT_EQ(first.fingerprint, again.fingerprint);
  EXPECT_EQ(first.fingerprint, Fingerprint(test_support::ReadAll(first.cert_path)));
  struct stat st {};
  ASSERT_EQ(stat((dir / "state" / "hub-key.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  fs::remove_all(dir);
}

TEST(HubIdentity, HubsStartingTogetherAgreeOnOneCertificate) {
  const fs::path dir = test_support::FreshTempDir("tls-identity-race");
  ServerOptions options;
  options.state_dir = dir.string();
  std::vector<std::string> seen(8);
  std::vector<std::thread> hubs;
  for (size_t i = 0; i < seen.size(); ++i)
    hubs.emplace_back([&, i] { seen[i] = LoadOrCreateHubIdentity(options).fingerprint; });
  for (auto& t : hubs) t.join();
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 1u);
  fs::remove_all(dir);
}

TEST(HubIdentity, ACertificateWithoutItsKeyIsNotReplacedSilently) {
  const fs::path dir = test_support::FreshTempDir("tls-identity-lost-key");
  ServerOptions options;
  options.state_dir = dir.string();
  LoadOrCreateHubIdentity(options);
  fs::remove(dir / "hub-key.pem");
  EXPECT_THROW(LoadOrCreateHubIdentity(options), std::runtime_error);
  // A lone key (a first start cut short) is simply made anew.
  fs::remove(dir / "hub-cert.pem");
  std::ofstream(dir / "hub-key.pem") << "partial";
  EXPECT_TRUE(LoadOrCreateHubIdentity(options).created);
  fs::remove_all(dir);
}

TEST(HubIdentity, GivenFilesMustBeAPair) {
  const fs::path dir = test_support::FreshTempDir("tls-identity-given");
  const CertificateAndKey a = GenerateSelfSigned("a", {});
  const CertificateAndKey b = GenerateSelfSigned("b", {});
  std::ofstream(dir / "a.pem") << a.cert_pem;
  std::ofstream(dir / "b.key") << b.key_pem;
  std::ofstream(dir / "a.key") << a.key_pem;
  ServerOptions options;
  options.cert_path = (dir / "a.pem").string();
  options.key_path = (dir / "b.key").string();
  EXPECT_THROW(LoadOrCreateHubIdentity(options), std::invalid_argument);
  options.key_path = (dir / "a.key").string();
  const HubIdentity id = LoadOrCreateHubIdentity(options);
  EXPECT_EQ(id.fingerprint, Fingerprint(a.cert_pem));
  EXPECT_FALSE(id.created);
  options.key_path.clear();
  EXPECT_THROW(LoadOrCreateHubIdentity(options), std::invalid_argument);
  fs::remove_all(dir);
}

TEST(KnownHubs, TheFirstFingerprintForAnAddressStays) {
  const fs::path dir = test_support::FreshTempDir("tls-known");
  KnownHubs known((dir / "sub" / "known_hubs").string());
  EXPECT_FALSE(known.Find("10.0.0.1:50051").has_value());
  EXPECT_EQ(known.RememberIfNew("10.0.0.1:50051", "SHA256:AA"), "SHA256:AA");
  EXPECT_EQ(known.RememberIfNew("10.0.0.1:50051", "SHA256:BB"), "SHA256:AA");
  EXPECT_EQ(known.RememberIfNew("10.0.0.1:50052", "SHA256:BB"), "SHA256:BB");
  EXPECT_EQ(known.Find("10.0.0.1:50051").value_or(""), "SHA256:AA");
  EXPECT_EQ(KnownHubs(known.path()).Find("10.0.0.1:50052").value_or(""), "SHA256:BB");
  fs::remove_all(dir);
}

TEST(KnownHubs, WorkersMeetingOneHubAtOnceRememberOneLine) {
  const fs::path dir = test_support::FreshTempDir("tls-known-race");
  const std::string path = (dir / "known_hubs").string();
  std::vector<std::string> kept(8);
  std::vector<std::thread> workers;
  for (size_t i = 0; i < kept.size(); ++i)
    workers.emplace_back([&, i] {
      kept[i] = KnownHubs(path).RememberIfNew("hub:1", "SHA256:" + std::to_string(i));
    });
  for (auto& t : workers) t.join();
  EXPECT_EQ(std::set<std::string>(kept.begin(), kept.end()).size(), 1u);
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') ++lines;
  EXPECT_EQ(lines, 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mt::tls
