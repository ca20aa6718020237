#include "hub/http/response.h"

namespace mt::http {

Response Response::Owned(int status, std::string content_type, std::string body) {
  Response r;
  r.status_ = status;
  r.content_type_ = std::move(content_type);
  r.owned_ = std::move(body);
  return r;
}

Response Response::Static(int status, std::string content_type, std::string_view body) {
  Response r;
  r.status_ = status;
  r.content_type_ = std::move(content_type);
  r.static_body_ = body;
  r.is_static_ = true;
  return r;
}

Response& Response::With(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
  return *this;
}

}  // namespace mt::http
