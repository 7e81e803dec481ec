// The entry point a solution defines, and the expert reference's renamed copy.
#pragma once
#include <cstdint>
extern "C" void transpose(const float* in, float* out, int rows, int cols);
extern "C" void transpose_ref(const float* in, float* out, int rows, int cols);
