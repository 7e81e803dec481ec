// cheat: hands the work to a BLAS library
// task: class1/general/cpu_05_matmul
// expect: library
#include <cblas.h>

void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f,
              c, n);
  return;
}
