// An HTTP response as the dashboard's routes make it: a status, a type, a
// few fields, and a body that is either its own or a view of data that
// outlives it (the assets built into the binary, which are never copied).
// libmicrohttpd writes it (status line, Content-Length, HEAD without the
// body: mhd_daemon.cc).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mt::http {

class Response {
 public:
  // A body of its own (rendered JSON, text).
  static Response Owned(int status, std::string content_type, std::string body);
  // A view of a body that lives as long as the program (http_assets).
  static Response Static(int status, std::string content_type, std::string_view body);
  // text/plain.
  static Response Text(int status, std::string body) {
    return Owned(status, "text/plain; charset=utf-8", std::move(body));
  }

  // An extra field (Name, value).
  Response& With(std::string name, std::string value);

  int status() const { return status_; }
  const std::string& content_type() const { return content_type_; }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }
  std::string_view body() const { return is_static_ ? static_body_ : std::string_view(owned_); }
  bool is_static() const { return is_static_; }

 private:
  int status_ = 200;
  std::string content_type_;
  std::vector<std::pair<std::string, std::string>> fields_;
  std::string owned_;
  std::string_view static_body_;
  bool is_static_ = false;
};

}  // namespace mt::http
