// The isolated worker's wire format: length-prefixed binary messages over a stream socket.
//
// A frame is a little-endian u32 payload length followed by the payload. A request payload
// starts with its Op; a reply payload starts with a status (u8 code, string message) and then
// the request's results. Fields are fixed-width little-endian integers, IEEE doubles as their
// bits, and strings/byte blocks as a u64 length then the bytes.
//
// WireWriter appends fields; WireReader reads them with bounds checks: reading past the end,
// a length larger than what is left, or an unknown status code marks the reader failed and
// every later read returns zeroes, so a truncated or garbage message is an error the caller
// sees through ok(), never undefined behaviour.
//
// Thread safety: none (one writer or reader per message). No I/O except write_frame and
// read_frame, which block on the descriptor (read_frame up to a deadline).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tune/status.hpp"

namespace tune::detail {

// Requests the worker serves (tune::Device calls, by name), in wire order.
enum class WireOp : std::uint8_t {
  hello = 1,  // worker -> parent once at startup: u32 kWireVersion, status, device fingerprint
  alloc,
  free_buffer,
  upload,
  download,
  fill,
  copy,
  compile,
  free_kernel,
  launch,
  time,
  synchronize,
  evict_binary,  // u64 kernel id, str why -> status, u8 dropped
};

// The protocol's version, the hello's first field: a parent refuses a worker speaking another
// (an installed tune-worker older or newer than the library that spawns it).
// 3: LaunchDims::cluster; 4: KernelSource::signature, evict_binary.
inline constexpr std::uint32_t kWireVersion = 4;

// The largest payload a frame carries: its length is a u32. write_frame refuses a larger one
// (invalid_argument, nothing written) and read_frame never sees one.
inline constexpr std::uint64_t kMaxFrameBytes = 0xffffffffu;

// Bulk transfers (upload, download, a restarted worker's replay) travel in pieces of at most
// this many bytes, so no message comes near kMaxFrameBytes and no reply holds a whole
// multi-GiB buffer twice. WorkerSettings::chunk_bytes overrides it (tests use a few bytes).
inline constexpr std::uint64_t kChunkBytes = std::uint64_t{256} << 20;

class WireWriter {
 public:
  void u8(std::uint8_t v) { bytes_.push_back(static_cast<std::byte>(v)); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void u64(std::uint64_t v) { fixed(v, 8); }
  void f64(double v);
  void str(std::string_view s) { block(s.data(), s.size()); }
  void block(const void* data, std::uint64_t n);
  void status(const Status& st);

  const std::vector<std::byte>& bytes() const noexcept { return bytes_; }

 private:
  void fixed(std::uint64_t v, int n);
  std::vector<std::byte> bytes_;
};

class WireReader {
 public:
  // Reads `bytes` from offset `at` (past fields another reader already read).
  explicit WireReader(const std::vector<std::byte>& bytes, std::uint64_t at = 0)
      : p_(bytes.data()), n_(bytes.size()), at_(std::min<std::uint64_t>(at, bytes.size())) {}

  std::uint8_t u8() { return static_cast<std::uint8_t>(fixed(1)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(fixed(4)); }
  std::uint64_t u64() { return fixed(8); }
  double f64();
  std::string str();
  // A block's bytes, borrowed from the message (empty when failed).
  std::pair<const std::byte*, std::uint64_t> block();
  Status status();

  // Marks the message malformed (a value out of its range).
  void fail() noexcept { ok_ = false; }
  bool ok() const noexcept { return ok_; }
  std::uint64_t position() const noexcept { return at_; }
  // ok() and nothing left over: a well-formed message of exactly the expected fields.
  bool done() const noexcept { return ok_ && at_ == n_; }

 private:
  std::uint64_t fixed(int n);
  const std::byte* p_;
  std::uint64_t n_;
  std::uint64_t at_ = 0;
  bool ok_ = true;
};

// Writes one frame. invalid_argument (nothing written: the peer's stream is intact) for a
// payload over kMaxFrameBytes; io_error naming errno on failure; EPIPE (the peer is gone) never
// raises SIGPIPE (MSG_NOSIGNAL on a socket).
Status write_frame(int fd, const std::vector<std::byte>& payload);

// Reads one frame, waiting at most until `deadline` (poll). timeout when it passes;
// unavailable "end of stream" on EOF before a whole frame.
Status read_frame(int fd, std::chrono::steady_clock::time_point deadline,
                  std::vector<std::byte>* payload);

}  // namespace tune::detail
