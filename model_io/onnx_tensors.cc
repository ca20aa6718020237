#include "model_io/onnx_tensors.h"

#include <cmath>
#include <cstring>

#include "model_io/onnx_error.h"

namespace mt {
namespace {

template <typename T>
std::vector<T> FromRaw(const std::string& raw, size_t count, const std::string& what) {
  if (raw.size() != count * sizeof(T))
    throw OnnxError(what + ": holds " + std::to_string(raw.size()) + " bytes, its dims need " +
                    std::to_string(count * sizeof(T)) + " (corrupt file?)");
  std::vector<T> out(count);
  // ONNX raw data is little-endian, as is every machine mt runs on.
  if (count) std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

template <typename Field>
void CheckCount(const Field& field, size_t count, const std::string& what) {
  if (static_cast<size_t>(field.size()) != count)
    throw OnnxError(what + ": holds " + std::to_string(field.size()) + " values, its dims need " +
                    std::to_string(count) + " (corrupt file?)");
}

// A non-finite weight makes every output it reaches NaN, and a hub would
// hand it to every worker: refused here, naming the tensor and the value.
void CheckFinite(const std::vector<float>& values, const std::string& what) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw OnnxError(what + ": value #" + std::to_string(i) + " is " +
                      (std::isnan(values[i]) ? "NaN" : "infinite") +
                      "; mt takes only finite weights (a damaged or crafted file?)");
}

}  // namespace

int64_t TensorElements(const onnx::TensorProto& t, const std::string& what) {
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > (int64_t{1} << 31))
      throw OnnxError(what + ": bad dimension " + std::to_string(d));
    // Checked at each step: [2^31, 2^31, 4] would wrap to 0 elements.
    if (d > 0 && count > (int64_t{1} << 31) / d) throw OnnxError(what + ": too large");
    count *= d;
  }
  return count;
}

int DecodedElementBytes(const onnx::TensorProto& t) {
  const bool is_float =
      t.data_type() == onnx::TensorProto::FLOAT || t.data_type() == onnx::TensorProto::DOUBLE;
  return is_float ? 4 : 8;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

OnnxConstant DecodeTensor(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0)
    throw OnnxError(what +
                    ": stored in an external data file, which mt does not read "
                    "(save the model with its weights inside the .onnx file)");
  OnnxConstant c;
  const size_t count = static_cast<size_t>(TensorElements(t, what));
  c.dims.assign(t.dims().begin(), t.dims().end());
  const bool raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      c.is_float = true;
      if (raw) {
        c.floats = FromRaw<float>(t.raw_data(), count, what);
      } else {
        CheckCount(t.float_data(), count, what);
        c.floats.assign(t.float_data().begin(), t.float_data().end());
      }
      CheckFinite(c.floats, what);
      return c;
    case onnx::TensorProto::DOUBLE: {
      c.is_float = true;
      std::vector<double> d;
      if (raw) {
        d = FromRaw<double>(t.raw_data(), count, what);
      } else {
        CheckCount(t.double_data(), count, what);
        d.assign(t.double_data().begin(), t.double_data().end());
      }
      c.floats.assign(d.begin(), d.end());
      CheckFinite(c.floats, what);  // after narrowing: 1e300 is infinite as a float
      return c;
    }
    case onnx::TensorProto::INT64:
      if (raw) {
        c.ints = FromRaw<int64_t>(t.raw_data(), count, what);
      } else {
        CheckCount(t.int64_data(), count, what);
        c.ints.assign(t.int64_data().begin(), t.int64_data().end());
      }
      return c;
    case onnx::TensorProto::INT32: {
      if (raw) {
        const auto v = FromRaw<int32_t>(t.raw_data(), count, what);
        c.ints.assign(v.begin(), v.end());
      } else {
        CheckCount(t.int32_data(), count, what);
        c.ints.assign(t.int32_data().begin(), t.int32_data().end());
      }
      return c;
    }
    case onnx::TensorProto::BOOL: {
      if (raw) {
        const auto v = FromRaw<uint8_t>(t.raw_data(), count, what);
        c.ints.assign(v.begin(), v.end());
      } else {
        CheckCount(t.int32_data(), count, what);  // ONNX keeps bools in int32_data
        c.ints.assign(t.int32_data().begin(), t.int32_data().end());
      }
      return c;
    }
    default:
      throw OnnxError(what + ": element type " +
                      onnx::TensorProto::DataType_Name(
                          static_cast<onnx::TensorProto::DataType>(t.data_type())) +
                      " is not supported (weights must be FLOAT)");
  }
}

onnx::TensorProto FloatTensor(const std::string& name, const std::vector<int64_t>& dims,
                              const float* data) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  size_t count = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    count *= static_cast<size_t>(d);
  }
  t.set_raw_data(reinterpret_cast<const char*>(data), count * sizeof(float));
  return t;
}

}  // namespace mt
