// A small JSON value for the --report files that scripts, benchmarks and
// tests read. Keys keep their insertion order so reports diff cleanly.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mt {

class Json {
 public:
  Json() : kind_(kNull) {}
  Json(double v) : kind_(kNumber), number_(v) {}
  Json(int v) : kind_(kInteger), integer_(v) {}
  Json(int64_t v) : kind_(kInteger), integer_(v) {}
  Json(uint64_t v) : kind_(kInteger), integer_(static_cast<int64_t>(v)) {}
  Json(bool v) : kind_(kBool), integer_(v) {}
  Json(std::string v) : kind_(kString), text_(std::move(v)) {}
  Json(const char* v) : kind_(kString), text_(v) {}

  static Json Object() { Json j; j.kind_ = kObject; return j; }
  static Json Array() { Json j; j.kind_ = kArray; return j; }

  Json& Set(const std::string& key, Json value);
  Json& Push(Json value);
  std::string Dump() const;

 private:
  enum Kind { kNull, kBool, kInteger, kNumber, kString, kObject, kArray };
  void DumpTo(std::string& out, int depth) const;

  Kind kind_;
  double number_ = 0;
  int64_t integer_ = 0;
  std::string text_;
  std::vector<std::pair<std::string, Json>> members_;  // object members or array items
};

}  // namespace mt
