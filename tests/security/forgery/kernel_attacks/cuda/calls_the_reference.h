// attack: calls the reference (CUDA, refused at compile time)
// task: class1/general/cuda_00_vector_add
// refused: symbols
// Calls the expert's copy.
extern "C" void vector_add_ref(const float* a, const float* b, float* c, int n);
__global__ void nothing(float* c) { (void)c; }
void vector_add(const float* a, const float* b, float* c, int n) {
  nothing<<<1, 1>>>(c);
  vector_add_ref(a, b, c, n);
}
