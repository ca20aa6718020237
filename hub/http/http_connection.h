// One client of the dashboard's server, as a state machine the poll loop
// (http_server.h) drives: TLS handshake, the request head (at most
// kMaxHeadBytes buffered, request_head.h), the answer, then the next head
// on the same connection or a close. Bodies are never read: a request
// that has one is answered and the connection closed, and what the peer
// still sends is drained and dropped for a moment so the answer arrives.
// Every state has a deadline; nothing blocks.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "hub/http/byte_stream.h"
#include "hub/http/request_head.h"
#include "hub/http/response.h"

namespace mt::http {

using Clock = std::chrono::steady_clock;
using Handler = std::function<Response(const RequestHead&)>;

struct ConnectionTimeouts {
  // From accepting the connection, or the end of its last answer, to a
  // complete request head (TLS handshake included): a slow or idle
  // client (keep-alive) is closed after this.
  Clock::duration head = std::chrono::seconds(5);
  // Without a byte of the answer taken by the client.
  Clock::duration write = std::chrono::seconds(10);
  // Dropping what a client still sends before closing.
  Clock::duration drain = std::chrono::seconds(1);
};

class HttpConnection {
 public:
  enum class State { kHandshake, kReadingHead, kWriting, kDraining, kClosed };
  // Why a closed connection ended, for the server's counts.
  enum class End { kNone, kFinished, kTimedOut, kRefusedHead, kNotTls, kError };

  HttpConnection(std::unique_ptr<ByteStream> stream, std::string address, Clock::time_point now,
                 const ConnectionTimeouts& timeouts);

  // Does all it can without blocking (answering through `handler`), and
  // gives up on the connection once its deadline has passed.
  void Advance(const Handler& handler, Clock::time_point now);

  State state() const { return state_; }
  End end() const { return end_; }
  int fd() const { return stream_->fd(); }
  const std::string& address() const { return address_; }
  // POLLIN and/or POLLOUT: what Advance waits for.
  short PollEvents() const;
  Clock::time_point deadline() const { return deadline_; }
  // When a byte last crossed its socket either way (or it was accepted),
  // and whether one ever did: the server makes room by closing silent
  // connections before those that spoke, and those longest without
  // progress first (http/connection_limits.h).
  Clock::time_point last_progress() const { return last_progress_; }
  bool spoke() const { return spoke_; }
  // A request is being served: never closed to make room.
  bool answering() const { return state_ == State::kWriting; }
  // Bytes wait on its socket, not yet read.
  bool HasInput() const;
  // Advance stopped with work left that needs no event (bytes already
  // received, or held by TLS): call it again without waiting.
  bool ready() const { return ready_; }

 private:
  // One step; false when it must wait (or is closed).
  bool Step(const Handler& handler, Clock::time_point now);
  bool ReadHead(const Handler& handler, Clock::time_point now);
  bool ReadMore();  // up to kMaxHeadBytes buffered
  bool WriteAnswer(Clock::time_point now);
  bool Drain();
  // After an Io that did nothing: wait for what it wants, or close. False.
  bool Blocked(Io io);
  void Answer(Response response, bool keep_alive, bool head_only, Clock::time_point now);
  void WaitForHead(Clock::time_point now);
  void Close(End why);

  std::unique_ptr<ByteStream> stream_;
  std::string address_;
  ConnectionTimeouts timeouts_;
  State state_ = State::kHandshake;
  End end_ = End::kNone;
  Io waiting_for_ = Io::kWantRead;
  Clock::time_point deadline_, last_progress_;
  std::string in_;            // received, not yet parsed; at most kMaxHeadBytes
  size_t unparsed_from_ = 0;  // in_ was parsed up to here, the head incomplete
  // The answer being written: its head, then its body (a view of
  // `response_` or of a static asset).
  std::optional<Response> response_;
  std::string out_head_;
  std::string_view out_body_;
  size_t written_ = 0;
  bool keep_alive_ = false, plain_answer_ = false, ready_ = false, spoke_ = false;
  size_t drained_ = 0;
};

}  // namespace mt::http
