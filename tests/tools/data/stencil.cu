// The kernel of t1_stencil.json (a Kernel Tuner T1 problem): a 5-point average over an n x n
// grid read from an (n+2) x (n+2) padded input,
//   out[y][x] = (in[y][x+1] + in[y+2][x+1] + in[y+1][x] + in[y+1][x+2] + in[y+1][x+1]) / 5.
// Tunables, defined by the tuner as Kernel Tuner does: block_size_x, block_size_y (the block),
// tile_size_x (outputs per thread along x), use_shared (1: the block stages its input tile in
// shared memory first).
extern "C" __global__ void stencil_kernel(float* out, const float* in, int n) {
  const int w = n + 2;
  const int y0 = blockIdx.y * block_size_y;
  const int x0 = blockIdx.x * block_size_x * tile_size_x;
  const int y = y0 + threadIdx.y;
#if use_shared
  __shared__ float tile[block_size_y + 2][block_size_x * tile_size_x + 2];
  for (int r = threadIdx.y; r < block_size_y + 2; r += block_size_y)
    for (int c = threadIdx.x; c < block_size_x * tile_size_x + 2; c += block_size_x)
      tile[r][c] = (y0 + r < w && x0 + c < w) ? in[(y0 + r) * w + x0 + c] : 0.0f;
  __syncthreads();
#define IN(r, c) tile[(r)-y0][(c)-x0]
#else
#define IN(r, c) in[(r)*w + (c)]
#endif
  if (y >= n) return;
  for (int t = 0; t < tile_size_x; ++t) {
    const int x = x0 + t * block_size_x + threadIdx.x;
    if (x < n)
      out[y * n + x] = 0.2f * (IN(y, x + 1) + IN(y + 2, x + 1) + IN(y + 1, x) + IN(y + 1, x + 2) +
                               IN(y + 1, x + 1));
  }
}
