// A test fixture parameterised by backend name (test_backends.h): "cpu1",
// "cpu3", "opencl"; skipped where the name needs an OpenCL device this
// machine lacks. Suites derive from it to keep their own names.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/support/test_backends.h"

namespace mt::test_support {

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    owned_ = MakeTestBackend(GetParam());
    if (!owned_) GTEST_SKIP() << kNoOpenCl;
  }
  kernels::Backend& backend() { return *owned_; }

 private:
  std::unique_ptr<kernels::Backend> owned_;
};

}  // namespace mt::test_support
