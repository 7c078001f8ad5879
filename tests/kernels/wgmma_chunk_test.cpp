// The wgmma matmul's copy path gathers each chunk of eight 16-bit elements from the 16-byte
// aligned blocks that cover it (kernels/cuda_hip/wg_chunk.h, pasted into matmul_wgmma.cu).
// The same header runs here on the CPU, the kernel's predicated ld.global.nc.v4 replaced by a
// read of host memory laid out as on the device: random row-major matrices with odd and other
// unaligned row lengths, placed at every even misalignment, chunks taken at row starts, row
// ends (valid < 8) and past the last row (valid = 0), compared with element-wise reads; every
// block read must hold at least one of the chunk's valid bytes (why it cannot fault on the
// GPU) and the second block is read exactly when the valid bytes reach into it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "wg_chunk.h"

namespace {

// Host memory with a 16-byte aligned window of `bytes` bytes, 32 bytes of random garbage
// before and after it (so reads past a matrix's ends find values that must not show).
class AlignedBytes {
 public:
  AlignedBytes(std::size_t bytes, std::mt19937& rng) : raw_(bytes + 96) {
    for (unsigned char& b : raw_) b = static_cast<unsigned char>(rng());
    const auto addr = reinterpret_cast<std::uintptr_t>(raw_.data());
    start_ = raw_.data() + ((16 - addr % 16) % 16) + 32;
  }
  unsigned char* data() { return start_; }

 private:
  std::vector<unsigned char> raw_;
  unsigned char* start_ = nullptr;
};

struct Counts {
  int first = 0, second = 0;
};

// The chunk of `valid` elements at `src` through wg_chunk_load / wg_chunk_finish, checking
// each block read; returns the eight elements.
std::vector<unsigned short> gather(const unsigned short* src, int valid, Counts& counts) {
  const auto lo = reinterpret_cast<std::uintptr_t>(src);
  const std::uintptr_t hi = lo + 2 * static_cast<std::uintptr_t>(valid);  // valid bytes' end
  int calls = 0;
  const auto load16 = [&](const unsigned short* block, bool load, unsigned* v) {
    ++calls;
    if (!load) return;
    const auto b = reinterpret_cast<std::uintptr_t>(block);
    CHECK(b % 16 == 0);
    // At least one byte of the block is one of the chunk's valid bytes.
    CHECK(b < hi);
    CHECK(b + 16 > lo);
    std::memcpy(v, block, 16);
    (b <= lo ? counts.first : counts.second) += 1;
  };
  wg_chunk c{};
  wg_chunk_load(src, valid, load16, c);
  CHECK(calls == 2);  // both loads issued (predicated), no branch around either
  unsigned w[4];
  wg_chunk_finish(c, w);
  std::vector<unsigned short> out(8);
  for (int e = 0; e < 8; ++e) out[e] = static_cast<unsigned short>(w[e / 2] >> (16 * (e % 2)));
  return out;
}

unsigned short element(const unsigned char* base, std::size_t index) {
  unsigned short v;
  std::memcpy(&v, base + 2 * index, 2);
  return v;
}

// The chunk of `valid` elements at element `start` of the matrix at `mat` through the gather,
// compared with element-wise reads (zeros from `valid` on); returns the blocks read.
Counts check_chunk(const unsigned char* mat, int start, int valid) {
  Counts counts;
  const auto* m = reinterpret_cast<const unsigned short*>(mat);
  const std::vector<unsigned short> got = gather(m + start, valid, counts);
  for (int e = 0; e < 8; ++e) {
    CAPTURE(e);
    CHECK(got[e] == (e < valid ? element(mat, static_cast<std::size_t>(start + e)) : 0));
  }
  return counts;
}

}  // namespace

TEST_CASE("a chunk at every even offset with every valid count comes out whole, zeros after") {
  std::mt19937 rng(7);
  AlignedBytes mem(64, rng);
  for (unsigned off = 0; off < 16; off += 2) {
    for (int valid = 0; valid <= 8; ++valid) {
      CAPTURE(off);
      CAPTURE(valid);
      const Counts counts = check_chunk(mem.data() + off, 0, valid);
      CHECK(counts.first == (valid > 0 ? 1 : 0));
      CHECK(counts.second == (valid > 0 && off + 2 * valid > 16 ? 1 : 0));
    }
  }
}

TEST_CASE("chunks of misaligned matrices with unaligned rows match element-wise reads") {
  std::mt19937 rng(2026);
  int chunks = 0, partial = 0, straddling = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int rows = std::uniform_int_distribution<int>(1, 24)(rng);
    // Mostly odd row lengths (TMA's misaligned case), some even but not multiples of 8.
    int cols = std::uniform_int_distribution<int>(1, 200)(rng);
    if (trial % 4 != 0) cols |= 1;
    const unsigned pad = 2 * std::uniform_int_distribution<unsigned>(0, 7)(rng);
    const std::size_t bytes = pad + 2 * static_cast<std::size_t>(rows) * cols;
    AlignedBytes mem(bytes, rng);
    const unsigned char* mat = mem.data() + pad;
    CAPTURE(rows);
    CAPTURE(cols);
    CAPTURE(pad);
    // The kernel's chunks: k = 0, 8, 16, ... of each row (valid = min(8, cols - k)), rows past
    // the matrix with valid = 0 and the base pointer; plus random starts and valid counts.
    for (int r = 0; r < rows + 2; ++r) {
      for (int k = 0; k < cols + 8; k += 8) {
        const int valid = r < rows ? std::clamp(cols - k, 0, 8) : 0;
        const int start = valid > 0 ? r * cols + k : 0;
        CAPTURE(r);
        CAPTURE(k);
        const Counts counts = check_chunk(mat, start, valid);
        ++chunks;
        partial += valid > 0 && valid < 8 ? 1 : 0;
        straddling += counts.second;
      }
    }
    for (int i = 0; i < 20; ++i) {
      const int start = std::uniform_int_distribution<int>(0, rows * cols - 1)(rng);
      const int valid =
          std::uniform_int_distribution<int>(0, std::min(8, rows * cols - start))(rng);
      CAPTURE(start);
      CAPTURE(valid);
      check_chunk(mat, start, valid);
    }
  }
  // The random shapes reached the cases that matter.
  CHECK(chunks > 10000);
  CHECK(partial > 100);
  CHECK(straddling > 1000);
}
