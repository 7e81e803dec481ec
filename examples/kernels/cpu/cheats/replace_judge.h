// cheat: replaces the harness's output check at link time (a strong definition beats the harness's inline one) and computes nothing
// task: class1/general/cpu_00_vector_add
// expect: harness_symbol
#include <string>

namespace kh {
template <class T>
struct Outputs {
  std::string judge(bool first, int ref_slot, double atol, double rtol);
};

template <>
std::string Outputs<float>::judge(bool, int, double, double) {
  return std::string();  // "" is the harness's word for a match
}
}  // namespace kh

void vector_add(const float* a, const float* b, float* c, int n) {
  (void)a, (void)b, (void)c, (void)n;
}
