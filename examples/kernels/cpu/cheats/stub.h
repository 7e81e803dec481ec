// cheat: a stub with no code
// task: class1/general/cpu_07_histogram
// expect: min_code
#include <cstdint>
void histogram(const int32_t* x, int n, int32_t* bins) { (void)x, (void)n, (void)bins; }
