#include "model_io/onnx_tensors.h"

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

}  // namespace

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
  size_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > (int64_t{1} << 31))
      throw OnnxError(what + ": bad dimension " + std::to_string(d));
    c.dims.push_back(d);
    count *= static_cast<size_t>(d);
  }
  if (count > (size_t{1} << 31)) throw OnnxError(what + ": too large");
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
