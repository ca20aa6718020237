#include "kernels/op_table.h"

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace mt::kernels {
namespace {

struct Entry {
  op_table::Accepts accepts;
  const std::type_info* signature;
  op_table::ErasedFn fn;
};

struct TableOpInfo {
  std::string name;
  std::vector<Entry> entries;  // one per backend class that has it
};

// Filled at static initialisation (the kernel files' registrations and the
// layers' keys, in any order) and read after: the mutex covers the rare
// key made later, not the calls.
struct Table {
  std::mutex mu;
  std::vector<TableOpInfo> ops;  // index: id - kOpCount
};

Table& TheTable() {
  static Table* table = new Table;  // never destroyed: keys may outlive main's statics
  return *table;
}

TableOpInfo& InfoOf(Op op) {
  const int i = static_cast<int>(op) - kOpCount;
  Table& t = TheTable();
  if (i < 0 || i >= static_cast<int>(t.ops.size()))
    throw std::logic_error("op " + std::to_string(static_cast<int>(op)) + " is not a table op");
  return t.ops[i];
}

}  // namespace

int OpCount() {
  Table& t = TheTable();
  std::lock_guard<std::mutex> lock(t.mu);
  return kOpCount + static_cast<int>(t.ops.size());
}

const char* OpName(Op op) {
  if (const char* name = EnumOpName(op)) return name;
  Table& t = TheTable();
  std::lock_guard<std::mutex> lock(t.mu);
  const int i = static_cast<int>(op) - kOpCount;
  return i >= 0 && i < static_cast<int>(t.ops.size()) ? t.ops[i].name.c_str() : "?";
}

OpSet TableOpsOf(const Backend& be) {
  Table& t = TheTable();
  std::lock_guard<std::mutex> lock(t.mu);
  OpSet ops;
  for (size_t i = 0; i < t.ops.size(); ++i)
    for (const Entry& e : t.ops[i].entries)
      if (e.accepts(be)) ops = ops | OpSet{static_cast<Op>(kOpCount + static_cast<int>(i))};
  return ops;
}

namespace op_table {

Op Intern(const char* name) {
  Table& t = TheTable();
  std::lock_guard<std::mutex> lock(t.mu);
  for (size_t i = 0; i < t.ops.size(); ++i)
    if (t.ops[i].name == name) return static_cast<Op>(kOpCount + static_cast<int>(i));
  for (int i = 0; i < kOpCount; ++i)
    if (std::string(EnumOpName(static_cast<Op>(i))) == name)
      throw std::logic_error(std::string("table op '") + name + "' has the name of a Backend op");
  if (kOpCount + static_cast<int>(t.ops.size()) >= kMaxOps)
    throw std::length_error(std::string("table op '") + name + "': more ops than an OpSet holds (" +
                            std::to_string(kMaxOps) + ")");
  t.ops.push_back(TableOpInfo{name, {}});
  return static_cast<Op>(kOpCount + static_cast<int>(t.ops.size()) - 1);
}

void Register(Op op, Accepts accepts, const std::type_info& signature, ErasedFn fn) {
  Table& t = TheTable();
  std::lock_guard<std::mutex> lock(t.mu);
  InfoOf(op).entries.push_back(Entry{accepts, &signature, fn});
}

ErasedFn Find(Op op, const Backend& be, const std::type_info& signature) {
  // A backend may leave out an op its class has (a test's limited backend).
  if (!be.SupportedOps().Has(op))
    throw UnsupportedOp("backend " + be.Name() + " does not implement " + OpName(op) +
                        " (it is not in its SupportedOps(); placement runs such work on the CPU)");
  Table& t = TheTable();
  std::lock_guard<std::mutex> lock(t.mu);
  for (const Entry& e : InfoOf(op).entries) {
    if (!e.accepts(be)) continue;
    if (*e.signature != signature)
      throw std::logic_error("table op " + InfoOf(op).name +
                             ": called with another signature than its kernel's");
    return e.fn;
  }
  throw UnsupportedOp("backend " + be.Name() + " has no function registered for " +
                      InfoOf(op).name);
}

}  // namespace op_table
}  // namespace mt::kernels
