# Rules shared by the CUDA example tasks. The harness, the solution and the expert
# reference are three translation units: the harness never includes the solution, and the
# reference's entry point is renamed (reference_tu.cu) so both link into one program.
# The evaluator passes ARCH for the GPU it runs on.
NVCC ?= nvcc
ARCH ?= -gencode arch=compute_80,code=sm_80
NVCCFLAGS ?= -O3 -std=c++17
KH_INC := -I$(KH_ROOT)/common -I.

test: harness.o solution.o reference.o
	$(NVCC) $(NVCCFLAGS) $(ARCH) $^ -o $@

ref: reference.o

harness.o: harness.cu api.h $(KH_ROOT)/common/kh_bench_cuda.h
	$(NVCC) $(NVCCFLAGS) $(ARCH) $(KH_INC) -c $< -o $@

solution.o: solution_tu.cu solution.h api.h
	$(NVCC) $(NVCCFLAGS) $(ARCH) -I. -c $< -o $@

reference.o: reference_tu.cu reference.h api.h
	$(NVCC) $(NVCCFLAGS) $(ARCH) -I. -c $< -o $@

clean:
	rm -f *.o test

.PHONY: clean ref
