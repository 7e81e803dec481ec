# Rules shared by the CPU example tasks. The harness, the solution and the expert reference
# are three translation units: the harness never includes the solution, and the
# reference's entry point is renamed (reference_tu.cpp) so both link into one program.
# Auto-vectorization is off: a kernel is fast because it is written to be (OpenMP, SIMD
# pragmas or intrinsics), the way a naive CUDA kernel stays naive.
CXX ?= g++
CXXFLAGS ?= -O2 -fno-tree-vectorize -march=native -fopenmp -std=c++17
KH_INC := -I$(KH_ROOT)/common -I.

test: harness.o solution.o reference.o
	$(CXX) $(CXXFLAGS) $^ -o $@

ref: reference.o

harness.o: harness.cpp api.h $(KH_ROOT)/common/kh_bench.h
	$(CXX) $(CXXFLAGS) $(KH_INC) -c $< -o $@

solution.o: solution_tu.cpp solution.h api.h
	$(CXX) $(CXXFLAGS) -I. -c $< -o $@

reference.o: reference_tu.cpp reference.h api.h
	$(CXX) $(CXXFLAGS) -I. -c $< -o $@

clean:
	rm -f *.o test

.PHONY: clean ref
