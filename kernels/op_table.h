// Ops that are not Backend methods. A kernel file defines such an op's
// function for one backend class and registers it by name (MT_REGISTER_OP);
// a layer calls it through a key (TableOp) that names it and spells its
// signature. So a layer kind with a new numeric op touches one file in
// kernels/ (its kernel), not the Op enum, backend.h and every backend's
// header, and a backend that lacks it needs no line at all.
//
// A table op has an Op id past the enum's, given by name at first use, so
// OpSet, SupportedOps() and placement treat it as any other op: a backend
// supports it when a function is registered for its class (each backend's
// SupportedOps() adds TableOpsOf(*this)), and calling it elsewhere throws
// UnsupportedOp. The key's signature is checked against the registered
// function's when called: a mismatch throws rather than calls.
//
//   // kernels/cpu/ops/row_scale.cc
//   void RowScaleForward(CpuBackend& be, View x, View s, View out, int rows, int inner) {...}
//   MT_REGISTER_OP("row_scale_forward", RowScaleForward);
//
//   // core/layers/mul.cc
//   const kernels::TableOp<void(View, View, View, int, int)> kRowScale{"row_scale_forward"};
//   ... Ops() { return {kRowScale.op()}; }  ... kRowScale(backend(), x, s, out, rows, inner);
#pragma once

#include <typeinfo>

#include "kernels/ops.h"

namespace mt::kernels {

class Backend;

// The table ops registered for `be`'s class (or a base of it).
OpSet TableOpsOf(const Backend& be);

namespace op_table {

using ErasedFn = void (*)();
using Accepts = bool (*)(const Backend&);

// The id of the op named `name`, new at its first use. Throws
// std::length_error when more ops than an OpSet holds are named.
Op Intern(const char* name);
void Register(Op op, Accepts accepts, const std::type_info& signature, ErasedFn fn);
// The function registered for `op` on `be`, which must support it
// (UnsupportedOp otherwise) with `signature` (std::logic_error otherwise).
ErasedFn Find(Op op, const Backend& be, const std::type_info& signature);

// Registration of a function `void F(B&, Args...)` for backend class B:
// called as `void(Backend&, Args...)` through Call.
template <auto F>
struct Registration;
template <class B, class... Args, void (*F)(B&, Args...)>
struct Registration<F> {
  static void Call(Backend& be, Args... args) { F(static_cast<B&>(be), args...); }
  static bool IsB(const Backend& be) { return dynamic_cast<const B*>(&be) != nullptr; }
  static bool Add(const char* name) {
    Register(Intern(name), &IsB, typeid(void(Args...)), reinterpret_cast<ErasedFn>(&Call));
    return true;
  }
};

}  // namespace op_table

template <class Signature>
class TableOp;

template <class... Args>
class TableOp<void(Args...)> {
 public:
  explicit TableOp(const char* name) : op_(op_table::Intern(name)) {}

  Op op() const { return op_; }
  void operator()(Backend& be, Args... args) const {
    using Fn = void (*)(Backend&, Args...);
    reinterpret_cast<Fn>(op_table::Find(op_, be, typeid(void(Args...))))(be, args...);
  }

 private:
  Op op_;
};

#define MT_OP_TABLE_CONCAT_(a, b) a##b
#define MT_OP_TABLE_CONCAT(a, b) MT_OP_TABLE_CONCAT_(a, b)
// At namespace scope in the kernel's .cc file, which is linked whole (an
// object library: nothing else refers to it), e.g. kernels/cpu/ops/.
#define MT_REGISTER_OP(name, fn)                                               \
  [[maybe_unused]] static const bool MT_OP_TABLE_CONCAT(mt_op_, __COUNTER__) = \
      ::mt::kernels::op_table::Registration<&fn>::Add(name)

}  // namespace mt::kernels
