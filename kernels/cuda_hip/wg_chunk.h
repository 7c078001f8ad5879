// wg_chunk.h: the wgmma matmul's copy path (matmul_wgmma.cu) gathers eight consecutive 16-bit
// elements of a row ("a chunk") wherever they lie, from the 16-byte aligned blocks that cover
// them. Plain C++ apart from the qualifiers: embed.cmake pastes it into the kernel source at
// build time, and tests/kernels/wgmma_chunk_test.cpp includes it on the host, so the kernel and
// its CPU check run the same arithmetic (the test supplies the block loads).
//
// Why aligned blocks: a row of a matrix with an odd length starts at any even byte, so nearly
// every chunk straddles two 16-byte blocks. Two aligned 16-byte loads and a few shifts replace
// eight 2-byte loads.
//
// Why this never faults: an aligned 16-byte block never crosses a page (pages are multiples of
// 16 bytes and aligned to their size), so a block holding at least one byte of the matrix lies
// in a page the matrix's allocation maps, even where it reaches past the matrix's first or last
// element. The first block holds the chunk's first valid element; the second is loaded only
// where the chunk's valid elements reach into it (past the matrix's end it might hold no byte
// of it and lie in an unmapped page). The bytes of a block outside the valid elements (the
// next row's, or another allocation's in the same page) are read and discarded: their values
// never reach the result, so a concurrent writer of them changes nothing. (A memory checker
// that tracks allocations byte by byte may still report such reads as out of bounds.)
#ifndef WG_CHUNK_FN
#if defined(__CUDACC_RTC__) || defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC_RTC__)
#define WG_CHUNK_FN __device__ __forceinline__
#else
#define WG_CHUNK_FN inline
#endif
#endif

// The four 32-bit words from byte `off` (even, 0..14) on of the 32 bytes `lo` (bytes 0-15)
// then `hi` (bytes 16-31), little-endian as on the GPU: selects by bits 3 and 2 of `off`
// (whole words; ternaries on named values, never a register array indexed at run time, which
// would live in local memory) then a 16-bit funnel shift by bit 1.
WG_CHUNK_FN void wg_chunk_extract(const unsigned* lo, const unsigned* hi, unsigned off,
                                  unsigned* w) {
  const bool by8 = (off & 8u) != 0, by4 = (off & 4u) != 0, by2 = (off & 2u) != 0;
  // y[j] = x[j + 2 by8] for j = 0..5, x being lo[0..3] hi[0..3].
  const unsigned y0 = by8 ? lo[2] : lo[0], y1 = by8 ? lo[3] : lo[1];
  const unsigned y2 = by8 ? hi[0] : lo[2], y3 = by8 ? hi[1] : lo[3];
  const unsigned y4 = by8 ? hi[2] : hi[0], y5 = by8 ? hi[3] : hi[1];
  // z[i] = y[i + by4] for i = 0..4.
  const unsigned z0 = by4 ? y1 : y0, z1 = by4 ? y2 : y1, z2 = by4 ? y3 : y2;
  const unsigned z3 = by4 ? y4 : y3, z4 = by4 ? y5 : y4;
  // w[i] = the 32 bits from bit 16 by2 of z[i] z[i + 1].
  w[0] = by2 ? (z0 >> 16) | (z1 << 16) : z0;
  w[1] = by2 ? (z1 >> 16) | (z2 << 16) : z1;
  w[2] = by2 ? (z2 >> 16) | (z3 << 16) : z2;
  w[3] = by2 ? (z3 >> 16) | (z4 << 16) : z3;
}

// Zeros the elements from `valid` (0..8) on of the chunk packed in `w` (element 2i in the low
// half of w[i], 2i + 1 in the high half).
WG_CHUNK_FN void wg_chunk_keep(int valid, unsigned* w) {
  for (int i = 0; i < 4; ++i)
    w[i] &= valid >= 2 * i + 2 ? 0xFFFFFFFFu : (valid == 2 * i + 1 ? 0xFFFFu : 0u);
}

// A chunk on its way: the 16-byte aligned blocks that cover it as loaded (zeros where not
// loaded), the chunk's byte offset in the first, and how many of its elements are valid.
// Loading a batch of chunks first and finishing them after keeps all their loads in flight.
struct wg_chunk {
  unsigned lo[4], hi[4];
  unsigned off;
  int valid;
};

// Starts loading eight consecutive elements from `src`, the first `valid` (0..8) of them in
// the matrix. `load16(block, load, v)` reads the four words of the 16-byte aligned `block`
// into v where `load` holds and leaves v alone otherwise (a predicated load: no branch). It
// loads the block holding src[0] where valid > 0 and the next block where the valid elements
// reach into it (see the top of this file for why neither can fault); with valid = 0 nothing.
template <class Load16>
WG_CHUNK_FN void wg_chunk_load(const unsigned short* src, int valid, const Load16& load16,
                               wg_chunk& c) {
  c.off = (unsigned)((unsigned long long)src & 15u);  // even: 2-byte elements
  c.valid = valid;
  const unsigned short* block = src - c.off / 2;
  for (int i = 0; i < 4; ++i) c.lo[i] = c.hi[i] = 0u;
  load16(block, valid > 0, c.lo);
  load16(block + 8, valid > 0 && c.off + 2u * (unsigned)valid > 16u, c.hi);
}

// The chunk's eight elements as four packed words, zeros from element `valid` on.
WG_CHUNK_FN void wg_chunk_finish(const wg_chunk& c, unsigned* w) {
  wg_chunk_extract(c.lo, c.hi, c.off, w);
  wg_chunk_keep(c.valid, w);
}
