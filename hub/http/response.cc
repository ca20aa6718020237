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

Response& Response::With(std::string_view name, std::string_view value) {
  fields_.append(name).append(": ").append(value).append("\r\n");
  return *this;
}

std::string Response::Head(bool keep_alive) const {
  std::string head = "HTTP/1.1 " + std::to_string(status_) + " " + ReasonPhrase(status_) + "\r\n";
  if (!content_type_.empty()) head += "Content-Type: " + content_type_ + "\r\n";
  head += "Content-Length: " + std::to_string(body().size()) + "\r\n";
  head += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  head += "X-Content-Type-Options: nosniff\r\n";
  head += fields_;
  head += "\r\n";
  return head;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

}  // namespace mt::http
