// The entry point of t1_hotspot.json: one explicit step of a 2D heat equation on a grid with a
// halo of 2 * temporal_tiling_factor cells (the forms of Kernel Tuner's hotspot example; the
// tests only list this problem's space, they do not run it).
extern "C" __global__ void calculate_temp(const float* power, const float* temp, float* temp_dst,
                                          float Rx_1, float step_div_cap) {
  const int halo = 2 * temporal_tiling_factor;
  const int width = 4096 + 2 * halo;
  const int x = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
  const int y = blockIdx.y * block_size_y + threadIdx.y;
  for (int t = 0; t < tile_size_x; ++t) {
    const int cx = x + t * block_size_x;
    if (cx >= 4096 || y >= 4096) continue;
    const float* c = temp + (y + halo) * width + cx + halo;
    const float lap = c[-1] + c[1] + c[-width] + c[width] - 4.0f * c[0];
    temp_dst[y * 4096 + cx] = c[0] + step_div_cap * (power[y * 4096 + cx] + Rx_1 * lap);
  }
}
