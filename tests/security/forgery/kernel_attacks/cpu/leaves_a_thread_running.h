// attack: A thread left running: the work done after the call returned.
// task: class1/general/cpu_03_transpose
// bound: none
#include <thread>
// Returns at once; a detached thread transposes after the clock stopped.
void transpose(const float* in, float* out, int rows, int cols) {
  std::thread([=] {
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) out[(long)c * rows + r] = in[(long)r * cols + c];
  }).detach();
}
