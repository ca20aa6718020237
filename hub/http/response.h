// An HTTP response as the dashboard's server writes it: a status, a type,
// a few fields, and a body that is either its own or a view of data that
// outlives it (the assets built into the binary, which are never copied).
#pragma once

#include <string>
#include <string_view>

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

  // An extra field, "Name: value" (no line end).
  Response& With(std::string_view name, std::string_view value);

  int status() const { return status_; }
  std::string_view body() const { return is_static_ ? static_body_ : std::string_view(owned_); }
  // The status line and fields, blank line included. HEAD answers send
  // this alone, with the body's Content-Length all the same.
  std::string Head(bool keep_alive) const;

 private:
  int status_ = 200;
  std::string content_type_;
  std::string fields_;  // extra "Name: value\r\n" lines
  std::string owned_;
  std::string_view static_body_;
  bool is_static_ = false;
};

// "OK", "Not Found"... for the statuses this server sends.
const char* ReasonPhrase(int status);

}  // namespace mt::http
