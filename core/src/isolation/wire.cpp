#include "isolation/wire.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tune::detail {

void WireWriter::fixed(std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xffu));
}

void WireWriter::f64(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  u64(bits);
}

void WireWriter::block(const void* data, std::uint64_t n) {
  u64(n);
  const auto* b = static_cast<const std::byte*>(data);
  if (n > 0) bytes_.insert(bytes_.end(), b, b + n);
}

void WireWriter::status(const Status& st) {
  u8(static_cast<std::uint8_t>(st.code()));
  str(st.ok() ? std::string_view() : std::string_view(st.message()));
}

std::uint64_t WireReader::fixed(int n) {
  if (!ok_ || n_ - at_ < static_cast<std::uint64_t>(n)) {
    ok_ = false;
    return 0;
  }
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(p_[at_ + i])) << (8 * i);
  at_ += static_cast<std::uint64_t>(n);
  return v;
}

double WireReader::f64() {
  const std::uint64_t bits = u64();
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

std::pair<const std::byte*, std::uint64_t> WireReader::block() {
  const std::uint64_t n = u64();
  if (!ok_ || n > n_ - at_) {
    ok_ = false;
    return {nullptr, 0};
  }
  const std::byte* at = p_ + at_;
  at_ += n;
  return {at, n};
}

std::string WireReader::str() {
  auto [p, n] = block();
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
}

Status WireReader::status() {
  const std::uint8_t code = u8();
  std::string msg = str();
  if (!ok_) return Status(StatusCode::data_loss, "truncated status");
  if (code > static_cast<std::uint8_t>(StatusCode::failed_precondition)) {
    ok_ = false;
    return Status(StatusCode::data_loss, "unknown status code " + std::to_string(code));
  }
  if (code == 0) return {};
  return Status(static_cast<StatusCode>(code), std::move(msg));
}

namespace {

Status errno_status(const char* what) {
  return Status(StatusCode::io_error, std::string(what) + ": " + std::strerror(errno));
}

Status write_all(int fd, const std::byte* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno_status("writing to the worker socket");
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return {};
}

// Reads exactly n bytes before `deadline`.
Status read_all(int fd, std::byte* p, std::size_t n,
                std::chrono::steady_clock::time_point deadline) {
  while (n > 0) {
    const auto left = deadline - std::chrono::steady_clock::now();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
    if (ms <= 0 && deadline != std::chrono::steady_clock::time_point::max())
      return Status(StatusCode::timeout, "no reply before the deadline");
    pollfd pfd{fd, POLLIN, 0};
    const int timeout = deadline == std::chrono::steady_clock::time_point::max()
                            ? -1
                            : static_cast<int>(std::min<long long>(ms, 1000 * 1000 * 1000));
    const int r = ::poll(&pfd, 1, timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_status("poll on the worker socket");
    }
    if (r == 0) return Status(StatusCode::timeout, "no reply before the deadline");
    const ssize_t got = ::recv(fd, p, n, 0);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return Status(StatusCode::unavailable, "end of stream");
      return errno_status("reading the worker socket");
    }
    if (got == 0) return Status(StatusCode::unavailable, "end of stream");
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return {};
}

}  // namespace

Status write_frame(int fd, const std::vector<std::byte>& payload) {
  if (payload.size() > kMaxFrameBytes)
    return Status(StatusCode::invalid_argument, "a message of " + std::to_string(payload.size()) +
                                                    " bytes cannot be framed (the limit is " +
                                                    std::to_string(kMaxFrameBytes) + ")");
  WireWriter head;
  head.u32(static_cast<std::uint32_t>(payload.size()));
  TUNE_RETURN_IF_ERROR(write_all(fd, head.bytes().data(), head.bytes().size()));
  return write_all(fd, payload.data(), payload.size());
}

Status read_frame(int fd, std::chrono::steady_clock::time_point deadline,
                  std::vector<std::byte>* payload) {
  std::byte head[4];
  TUNE_RETURN_IF_ERROR(read_all(fd, head, sizeof head, deadline));
  std::uint64_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(head[i])) << (8 * i);
  payload->resize(n);
  return read_all(fd, payload->data(), n, deadline);
}

}  // namespace tune::detail
