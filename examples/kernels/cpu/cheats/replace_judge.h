// cheat: defines the harness's output check (a strong definition used to beat the harness's inline one at link time) and computes nothing; the harness's functions now have internal linkage and judge in a process without the solution, and the link check refuses the extra global
// task: class1/general/cpu_00_vector_add
// expect: global_symbol
#include <string>

namespace kh {
template <class T>
struct Check {
  std::string judge(bool first, const T* ref, const T* sol, double atol, double rtol);
};

template <>
std::string Check<float>::judge(bool, const float*, const float*, double, double) {
  return std::string();  // "" is the harness's word for a match
}
}  // namespace kh

void vector_add(const float* a, const float* b, float* c, int n) {
  (void)a, (void)b, (void)c, (void)n;
}
