#include "hub/http/http_connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

namespace mt::http {
namespace {

// What a peer may still send after an answer that closes the connection,
// read and dropped: enough for a browser to see the answer, bounded.
constexpr size_t kMaxDrainBytes = 1 << 20;
constexpr size_t kReadChunk = 4096;
constexpr int kMaxStepsPerAdvance = 64;

}  // namespace

HttpConnection::HttpConnection(std::unique_ptr<ByteStream> stream, std::string address,
                               Clock::time_point now, const ConnectionTimeouts& timeouts)
    : stream_(std::move(stream)), address_(std::move(address)), timeouts_(timeouts) {
  last_progress_ = now;
  deadline_ = now + timeouts_.head;
}

bool HttpConnection::HasInput() const {
  char byte = 0;
  return state_ != State::kClosed && recv(fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

short HttpConnection::PollEvents() const {
  if (state_ == State::kClosed) return 0;
  return waiting_for_ == Io::kWantWrite ? POLLOUT : POLLIN;
}

void HttpConnection::Advance(const Handler& handler, Clock::time_point now) {
  // Bounded, so a client that pipelines requests as fast as it reads the
  // answers does not keep the loop from the others.
  ready_ = false;
  const uint64_t moved = stream_->bytes_moved();
  for (int steps = 0; state_ != State::kClosed; ++steps) {
    if (steps == kMaxStepsPerAdvance) {
      ready_ = true;  // more to do without waiting: the server comes back at once
      break;
    }
    if (!Step(handler, now)) break;
  }
  if (state_ != State::kClosed && stream_->bytes_moved() != moved) {
    last_progress_ = now;
    spoke_ = true;
  }
  if (state_ != State::kClosed && now >= deadline_)
    Close(state_ == State::kDraining ? End::kFinished : End::kTimedOut);
}

bool HttpConnection::Step(const Handler& handler, Clock::time_point now) {
  switch (state_) {
    case State::kHandshake: {
      const Io io = stream_->Handshake();
      if (io == Io::kDone) {
        state_ = State::kReadingHead;
        return true;
      }
      if (io == Io::kNotTls) {
        // A browser sent http:// to the https:// port: tell it in words.
        plain_answer_ = true;
        Answer(
            Response::Text(400, "this dashboard speaks HTTPS: open https:// instead of http://\n"),
            false, false, now);
        end_ = End::kNotTls;
        return true;
      }
      return Blocked(io);
    }
    case State::kReadingHead: return ReadHead(handler, now);
    case State::kWriting: return WriteAnswer(now);
    case State::kDraining: return Drain();
    case State::kClosed: return false;
  }
  return false;
}

bool HttpConnection::ReadHead(const Handler& handler, Clock::time_point now) {
  // Parsed again only when a line may have ended (or the cap is reached):
  // a head sent a byte at a time costs a parse per line, not per byte.
  if (in_.find('\n', unparsed_from_) == std::string::npos && in_.size() < kMaxHeadBytes)
    return ReadMore();
  RequestHead head;
  const HeadParse parsed = ParseRequestHead(in_, head);
  unparsed_from_ = in_.size();
  if (parsed.outcome == HeadParse::Outcome::kRefused) {
    end_ = End::kRefusedHead;
    Answer(Response::Text(parsed.status, parsed.why + "\n"), false, false, now);
    return true;
  }
  if (parsed.outcome == HeadParse::Outcome::kComplete) {
    in_.erase(0, parsed.head_bytes);
    unparsed_from_ = 0;
    // A request with a body is answered without reading the body, and the
    // connection closed: what follows the head is not a request.
    const bool keep_alive = head.keep_alive && !head.has_body;
    Answer(handler(head), keep_alive, head.method == "HEAD", now);
    return true;
  }
  return ReadMore();
}

bool HttpConnection::ReadMore() {
  char chunk[kReadChunk];
  const size_t room = std::min(kReadChunk, kMaxHeadBytes - std::min(kMaxHeadBytes, in_.size()));
  size_t got = 0;
  const Io io = stream_->Read(chunk, room, got);
  if (io != Io::kDone) return Blocked(io);
  in_.append(chunk, got);
  return true;
}

bool HttpConnection::Blocked(Io io) {
  if (io == Io::kWantRead || io == Io::kWantWrite)
    waiting_for_ = io;
  else
    Close(io == Io::kClosed ? End::kFinished : End::kError);
  return false;
}

void HttpConnection::Answer(Response response, bool keep_alive, bool head_only,
                            Clock::time_point now) {
  response_ = std::move(response);
  keep_alive_ = keep_alive;
  out_head_ = response_->Head(keep_alive);
  out_body_ = head_only ? std::string_view() : response_->body();
  written_ = 0;
  state_ = State::kWriting;
  deadline_ = now + timeouts_.write;
}

bool HttpConnection::WriteAnswer(Clock::time_point now) {
  const size_t total = out_head_.size() + out_body_.size();
  if (written_ == total) {
    response_.reset();
    out_head_.clear();
    out_body_ = {};
    if (keep_alive_) {
      WaitForHead(now);
    } else {
      if (end_ == End::kNone) end_ = End::kFinished;
      stream_->Shutdown();
      state_ = State::kDraining;
      deadline_ = now + timeouts_.drain;
    }
    return true;
  }
  const bool in_head = written_ < out_head_.size();
  const char* from =
      in_head ? out_head_.data() + written_ : out_body_.data() + (written_ - out_head_.size());
  const size_t size = in_head ? out_head_.size() - written_ : total - written_;
  size_t wrote = 0;
  const Io io =
      plain_answer_ ? stream_->WritePlain(from, size, wrote) : stream_->Write(from, size, wrote);
  if (io != Io::kDone) return Blocked(io);
  written_ += wrote;
  deadline_ = now + timeouts_.write;
  return true;
}

void HttpConnection::WaitForHead(Clock::time_point now) {
  state_ = State::kReadingHead;
  deadline_ = now + timeouts_.head;
  waiting_for_ = Io::kWantRead;
}

bool HttpConnection::Drain() {
  char chunk[kReadChunk];
  size_t got = 0;
  const Io io = stream_->ReadPlain(chunk, sizeof chunk, got);
  if (io == Io::kDone) {
    drained_ += got;
    if (drained_ < kMaxDrainBytes) return true;
  } else if (io == Io::kWantRead) {
    waiting_for_ = io;
    return false;
  }
  Close(end_ == End::kNone ? End::kFinished : end_);
  return false;
}

void HttpConnection::Close(End why) {
  if (end_ == End::kNone || why == End::kTimedOut || why == End::kError) end_ = why;
  state_ = State::kClosed;
  in_.clear();
  in_.shrink_to_fit();
  response_.reset();
}

}  // namespace mt::http
