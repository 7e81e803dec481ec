# Rules shared by the CPU example tasks. Three translation units, two programs: `test` is
# the harness and the expert reference (it starts the workers, times and checks; it runs
# the reference in a second copy of itself), `test_sol` the harness and the solution alone
# (the solution's worker). The harness never includes the solution, no program holds both
# the solution and the reference, and the reference's entry point is renamed
# (reference_tu.cpp). Each task's Makefile names its entry point (ENTRY); a program
# without its own is a link error.
# Auto-vectorization is off: a kernel is fast because it is written to be (OpenMP, SIMD
# pragmas or intrinsics), the way a naive CUDA kernel stays naive.
CXX ?= g++
CXXFLAGS ?= -O2 -fno-tree-vectorize -march=native -fopenmp -std=c++17
KH_INC := -I$(KH_ROOT)/common -I.

test: harness.o reference.o test_sol
	$(CXX) $(CXXFLAGS) harness.o reference.o -Wl,--require-defined=$(ENTRY)_ref -o $@

test_sol: harness.o solution.o
	$(CXX) $(CXXFLAGS) harness.o solution.o -Wl,--require-defined=$(ENTRY) -o $@

ref: reference.o

harness.o: harness.cpp api.h $(KH_ROOT)/common/kh_bench.h
	$(CXX) $(CXXFLAGS) $(KH_INC) -c $< -o $@

solution.o: solution_tu.cpp solution.h api.h
	$(CXX) $(CXXFLAGS) -I. -c $< -o $@

reference.o: reference_tu.cpp reference.h api.h
	$(CXX) $(CXXFLAGS) -I. -c $< -o $@

clean:
	rm -f *.o test test_sol

.PHONY: clean ref
