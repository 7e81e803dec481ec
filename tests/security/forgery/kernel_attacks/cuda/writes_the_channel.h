// attack: writes the channel (CUDA, refused at compile time)
// task: class1/general/cuda_00_vector_add
// refused: symbols
#include <cstdio>
#include <cstdlib>
// Writes a verdict into the results channel from the host side of the kernel.
__global__ void nothing(float* c) { (void)c; }
void vector_add(const float* a, const float* b, float* c, int n) {
  (void)a, (void)b, (void)n;
  nothing<<<1, 1>>>(c);
  if (FILE* f = fopen(getenv("KH_RESULTS"), "a")) fclose(f);
}
