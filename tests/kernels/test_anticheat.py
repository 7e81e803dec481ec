"""Static rules (after comments and strings are stripped) and the symbol policy a solution
compiled on its own must meet."""

from __future__ import annotations

import re

import pytest

from vibes_eval.benchmarks.kernels.checks import objects, symbols
from vibes_eval.benchmarks.kernels.checks.source import (
    KERNEL_RE,
    LAUNCH_RE,
    check_source,
    kernel_pattern,
    local_includes,
    strip_source,
)

GOOD_CUDA = """
#include <cuda_runtime.h>
__global__ __launch_bounds__(256, 2) void k(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.f;
}
void run(float* x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }
"""


def rules(source: str, *, cuda: bool = True, **kw: object) -> list[str]:
    args = {"blocked": [], "required": [], "task_files": ["solution.h", "reference.h", "harness.cu",
            "Makefile", "task.yaml"], "allowed_files": {"solution.h"}, "min_code_lines": 5}  # fmt: skip
    args.update(kw)
    return [v.rule for v in check_source(source, cuda=cuda, **args)]  # type: ignore[arg-type]


def test_comments_strings_and_dead_code_are_stripped() -> None:
    src = r"""
// __global__ void a() {} k<<<1,1>>>();
/* __global__ void b() {} */
#if 0
__global__ void c() {}
#else
int live = 1'000'000;
#endif
const char* s = "__global__ void d() <<<1,1>>>";
char q = '"';
// a comment that goes on \
__global__ void e() {}
auto r = R"x(raw "__global__ void f" )x";
"""
    bare = strip_source(src)
    assert "__global__" not in bare and "<<<" not in bare
    assert "int live = 1'000'000;" in bare and re.search(r"char q = ' *';", bare)
    assert bare.count("\n") == src.count("\n")


def test_the_kernel_regex_allows_attributes_between_global_and_void() -> None:
    for text in ("__global__ void k(", "__global__ __launch_bounds__(256) void k(",
                 "__global__ __launch_bounds__(MAX(128, 2), 1) void k(",
                 "static __global__ void k(", "__global__\n  inline void k("):  # fmt: skip
        assert re.search(KERNEL_RE, "x " + text), text
    assert not re.search(KERNEL_RE, "__global__ int k(")
    assert kernel_pattern(r"__global__\s+void") == KERNEL_RE
    assert re.search(LAUNCH_RE, "k<<<grid, block, 0>>>(x)") and re.search(
        LAUNCH_RE, "cudaLaunchKernel(f"
    )
    assert rules(GOOD_CUDA, required=[r"__global__\s+void", r"<<<.*>>>"]) == []


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("// __global__ void k() {}\n// k<<<1,1>>>();\nvoid f() {\n}\n\n\n", "required_pattern"),
        (GOOD_CUDA + "\n#include <cublas_v2.h>\n", "library"),
        (GOOD_CUDA + "\nvoid g() { cublasSgemm(h); }\n", "library"),
        (GOOD_CUDA + "\nvoid g() { try { } catch (...) { } }\n", "try_catch"),
        (
            GOOD_CUDA + "\n__attribute__((constructor)) static void early() {}\n",
            "static_constructor",
        ),
        (GOOD_CUDA + '\n#include "reference.h"\n', "task_file"),
        (GOOD_CUDA + '\n#define R "harness.cu"\n', "task_file"),
        (GOOD_CUDA + "\nvoid g() { syscall(1, 1, 0, 0); }\n", "syscall"),
        ("__global__ void k(){}\nvoid f(){k<<<1,1>>>();}\n", "min_code"),
        (GOOD_CUDA + "\nauto t = torch::zeros({1});\n", "framework"),
    ],
)
def test_static_rules(source: str, rule: str) -> None:
    assert rule in rules(source)


def test_strings_do_not_trip_rules_and_task_blocked_patterns_apply() -> None:
    assert rules(GOOD_CUDA + '\nconst char* s = "cublasSgemm( try {";\n') == []
    assert "blocked_pattern" in rules(GOOD_CUDA, blocked=[r"\+= 1\.f"])
    assert rules("void f() {\n  int x = 0;\n  x++;\n  (void)x;\n}\n", cuda=False) == []
    assert local_includes('#include "api.h"\n#include <cmath>\n') == {"api.h"}


def test_symbol_policy() -> None:
    ok = ["memcpy", "expf", "sqrt", "_Znwm", "_ZdlPvm", "GOMP_parallel", "omp_get_thread_num",
          "__cudaRegisterFunction", "__cudaLaunchKernel", "cudaMalloc", "cudaGetLastError",
          "cudaGetDeviceProperties_v2", "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
          "_ZSt20__throw_length_errorPKc", "__stack_chk_fail", "_ZGVeN16v_expf"]  # fmt: skip
    assert symbols.undefined_violations(ok, cuda=True) == []
    for bad in ("printf", "puts", "write", "fopen", "exit", "_exit", "getenv", "dlsym",
                "pthread_create", "cudaStreamCreate", "cudaStreamSetAttribute",
                "cudaDeviceSetLimit", "cudaEventElapsedTime", "clock_gettime", "matmul_ref",
                "GOMP_target_ext", "fork", "syscall"):  # fmt: skip
        assert symbols.undefined_violations([bad], cuda=True), bad
    assert symbols.undefined_violations(["cudaMalloc"], cuda=False)  # no CUDA on the CPU
    assert symbols.defined_violations(["malloc"], cuda=False)
    assert symbols.defined_violations(["main"], cuda=False)
    assert symbols.defined_violations(["vector_add", "_ZN12_GLOBAL__N_14add4EPKfS1_Pfi"],
                                      cuda=False) == []  # fmt: skip


def test_device_printf_is_found_in_ptx() -> None:
    ptx = ".extern .func  (.param .b32 func_retval0) vprintf\n(\n.param .b64 vprintf_param_0\n"
    assert [v.rule for v in symbols.device_violations(ptx)] == ["device_io"]
    assert symbols.device_violations(".extern .func __assertfail\n") == []


def test_nm_output_is_parsed_with_or_without_addresses() -> None:
    text = "                 U puts\n0000000000000000 T vector_add\n0000 W _ZN4dim3C1Ejjj\n"
    assert symbols.parse_nm(text) == [("U", "puts"), ("T", "vector_add"), ("W", "_ZN4dim3C1Ejjj")]


HARNESS_NM = """harness.o:
0000000000000000 T main
0000000000000000 W _ZN2kh7OutputsIfE5judgeB5cxx11Ebidd
0000000000000000 V DW.ref.__gxx_personality_v0
                 U vector_add
reference.o:
0000000000000000 T vector_add_ref
"""


def test_link_check_keeps_the_solution_to_its_entry_point() -> None:
    others = symbols.parse_nm(HARNESS_NM)
    entry = [("T", "vector_add"), ("V", "DW.ref.__gxx_personality_v0")]
    assert objects.link_violations(entry, others, strict=True) == []
    judge = [*entry, ("T", "_ZN2kh7OutputsIfE5judgeB5cxx11Ebidd")]
    assert [v.rule for v in objects.link_violations(judge, others, strict=True)] == [
        "harness_symbol"
    ]
    weak_ref = [*entry, ("W", "vector_add_ref")]  # a weak copy of the reference's too
    assert [v.rule for v in objects.link_violations(weak_ref, others, strict=False)] == [
        "harness_symbol"
    ]
    helper = [*entry, ("T", "helper"), ("W", "_ZNSt6vectorIdSaIdEE7reserveEm")]
    found = objects.link_violations(helper, others, strict=True)
    assert [v.rule for v in found] == ["global_symbol"] and found[0].detail.endswith("helper")
    assert objects.link_violations(helper, others, strict=False) == []  # CUDA: kernel stubs


READELF_S = """  [ 6] .init_array       INIT_ARRAY      0000000000000000 000060 000008 08  WA  0   0  8
  [ 7] .rela.init_array  RELA            0000000000000000 0001d8 000018 18   I 12   6  8
"""
READELF_R = """Relocation section '.rela.init_array' at offset 0x1d8 contains 1 entry:
    Offset             Info             Type               Symbol's Value  Symbol's Name + Addend
0000000000000000  0000000300000001 R_X86_64_64            0000000000000000 .text.startup + 0
"""
OBJDUMP_T = "0000000000000000 l     F .text.startup\t000000000000008c {name}\n"


def test_init_sections_are_refused_but_nvccs_registration() -> None:
    cuda_reg = OBJDUMP_T.format(name="_ZL24__sti____cudaRegisterAllv")
    mine = OBJDUMP_T.format(name="_GLOBAL__sub_I_warm")
    assert objects.init_violations(READELF_S, READELF_R, cuda_reg, cuda=True) == []
    for symtab, cuda in ((cuda_reg, False), (mine, True), (mine, False)):
        found = objects.init_violations(READELF_S, READELF_R, symtab, cuda=cuda)
        assert [v.rule for v in found] == ["init_section"]
    two = READELF_S.replace("000060 000008", "000060 000010")  # an entry with no relocation
    assert objects.init_violations(two, READELF_R, cuda_reg, cuda=True)
    fini = READELF_S.replace(".init_array ", ".fini_array ").replace("INIT_ARRAY", "FINI_ARRAY")
    assert objects.init_violations(fini, "", "", cuda=True)
    assert objects.init_violations("  [ 1] .text PROGBITS 0 000040 000010 00 AX 0 0 1\n", "",
                                   "", cuda=False) == []  # fmt: skip
