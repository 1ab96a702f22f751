"""A probe of the one route to fp32 GEMM at AVX-512 speed on this CPU: inductor's max-autotune C++ GEMM template
(CppMicroGemmFP32Vec) against ATen's bmm (MKL), on one thread, for the three GEMMs of FedCR's stacked Linear layer
at the paper's size (10 clients x 48 samples, 1024 -> 1024): the forward (x w^T), the input gradient (g w) and the
weight gradient (g^T x). Inductor's autotuner times both candidates and prints its table (TORCH_LOGS=autotuning);
this script prints, per GEMM, the compile time, both rates and whether the compiled result equals eager's.

    OMP_NUM_THREADS=1 TORCH_LOGS=autotuning python benchmarks/probe_inductor_gemm.py
"""
from __future__ import annotations

import time

import torch


def rate(f, *args, reps: int = 30) -> float:
    f(*args)
    t0 = time.perf_counter()
    for _ in range(reps):
        f(*args)
    return (time.perf_counter() - t0) / reps


def main() -> None:
    import torch._inductor.config as inductor

    torch.set_num_threads(1)
    inductor.max_autotune_gemm_backends = "CPP,ATEN"  # the C++ template beside ATen's kernel; the tuner picks
    n, B, d = 10, 48, 1024
    g = torch.Generator().manual_seed(0)
    x, gy, w = torch.randn(n, B, d, generator=g), torch.randn(n, B, d, generator=g), torch.randn(n, d, d, generator=g)
    gemms = {"forward x w^T": (lambda a, b: torch.bmm(a, b.transpose(1, 2)), (x, w)),
             "input gradient g w": (lambda a, b: torch.bmm(a, b), (gy, w)),
             "weight gradient g^T x": (lambda a, b: torch.bmm(a.transpose(1, 2).contiguous(), b), (gy, x))}
    flop = 2 * n * B * d * d
    with torch.no_grad():
        for name, (f, args) in gemms.items():
            torch._dynamo.reset()
            compiled = torch.compile(f, mode="max-autotune")
            t0 = time.perf_counter()
            got = compiled(*args)
            seconds = time.perf_counter() - t0
            same = bool(torch.equal(got, f(*args)))
            eager, ind = rate(f, *args), rate(compiled, *args)
            print(f"{name}: compile {seconds:.1f} s; eager {flop / eager / 1e9:.1f} GFLOP/s, compiled "
                  f"{flop / ind / 1e9:.1f} GFLOP/s; the same numbers as eager: {same}")


if __name__ == "__main__":
    main()
