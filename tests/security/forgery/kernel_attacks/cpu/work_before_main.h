// attack: Issue 26 #4: work before main, from an initializer section (no constructor attribute).
// task: class1/general/cpu_00_vector_add
// bound: none
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
// Before main: reads the results channel's name and nonce from the environment, writes a
// passing verdict there and ends the process; the kernel computes nothing.
static void before_main() {
  const char* path = getenv("KH_RESULTS");
  const char* nonce = getenv("KH_NONCE");
  if (!path || !nonce) return;
  if (FILE* f = fopen(path, "w")) {
    fprintf(f, "%s begin\n%s size label=n=65536 ok=1 trials=20 ref_min=3 ref_mean=3 "
            "sol_min=1 sol_mean=1\n%s end passed=1 sizes=1\n", nonce, nonce, nonce);
    fclose(f);
    printf("Passed\n");
    fflush(stdout);
    _exit(0);
  }
}
__attribute__((used, section(".init_array"))) static void (*early)() = before_main;

void vector_add(const float* a, const float* b, float* c, int n) {
  (void)a, (void)b, (void)c, (void)n;
}
