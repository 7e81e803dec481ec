// attack: work before main (CUDA, refused at compile time)
// task: class1/general/cuda_00_vector_add
// refused: init_section
// An initializer-section entry of its own besides nvcc's registration.
static int early_done;
static void before_main() { early_done = 1; }
__attribute__((used, section(".init_array"))) static void (*early)() = before_main;

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
void vector_add(const float* a, const float* b, float* c, int n) {
  add<<<(n + 255) / 256, 256>>>(a, b, c, n);
}
