// cheat: includes the expert reference from the task folder and calls it
// task: class1/general/cpu_06_conv1d
// expect: task_file
#define conv1d expert_conv1d
#include "reference.h"
#undef conv1d

void conv1d(const float* x, int n, const float* w, int taps, float* y) {
  expert_conv1d(x, n, w, taps, y);
}
