// attack: The results channel written from the kernel itself.
// task: class1/general/cpu_00_vector_add
// bound: none
#include <cstdio>
#include <cstdlib>
// Looks for the results channel's name and nonce and writes a passing verdict into it;
// computes nothing.
void vector_add(const float* a, const float* b, float* c, int n) {
  (void)a, (void)b, (void)c, (void)n;
  const char* path = getenv("KH_RESULTS");
  const char* nonce = getenv("KH_NONCE");
  FILE* f = path && nonce ? fopen(path, "a") : nullptr;
  if (f) {
    fprintf(f, "%s size label=n=65536 ok=1 trials=20 ref_min=3 ref_mean=3 sol_min=1 "
            "sol_mean=1\n%s end passed=1 sizes=1\n", nonce, nonce);
    fclose(f);
  }
}
