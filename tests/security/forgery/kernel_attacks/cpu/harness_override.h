// attack: Issue 26 #2: the harness's own functions replaced at link time.
// task: class1/general/cpu_00_vector_add
// bound: none
#include <string>
// Defines the harness's output check and tolerance test (a strong definition used to beat
// the harness's inline one at link time) and computes nothing.
namespace kh {
template <class T>
struct Check {
  std::string judge(bool first, const T* ref, const T* sol, double atol, double rtol);
};
template <>
std::string Check<float>::judge(bool, const float*, const float*, double, double) {
  return std::string();
}
bool close_enough(float, float, double, double) { return true; }
}  // namespace kh

void vector_add(const float* a, const float* b, float* c, int n) {
  (void)a, (void)b, (void)c, (void)n;
}
