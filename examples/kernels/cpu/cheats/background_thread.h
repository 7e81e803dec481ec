// cheat: returns at once and does the work on a thread after the clock stopped
// task: class1/general/cpu_03_transpose
// expect: symbols
#include <thread>

void transpose(const float* in, float* out, int rows, int cols) {
  std::thread([=] {
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) out[(long)c * rows + r] = in[(long)r * cols + c];
  }).detach();
}
