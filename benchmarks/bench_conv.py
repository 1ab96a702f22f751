"""One convolution kernel for all clients of a group, measured on this machine (issue 71): the engine's grouped
convolution (the clients stacked in channels, groups = clients; channels-last on the CPU, as the engine runs it)
against im2col (`F.unfold`) and one batched matmul over the clients, on the MNIST CNN's two layers (Table A.2:
1 -> 10 and 10 -> 20 channels, 5 x 5) at FedLog's MNIST setting: 50 clients, a training batch of 10 (forward and
backward) and an evaluation chunk of 216 samples a client (forward); and the grouped convolution in bfloat16 under
autocast (`grouped_bf16`; on AMX processors oneDNN's tile kernels). The sides take turns (A B C A B C ...) and the
script prints medians and the median of the ratios taken in the same turn, and the largest difference between each
side's outputs and grouped's (another summation order, or another precision: the engine would need a Config field to
use it, since shipped numbers must not move). It also counts the top-level operations of one forward and backward of each (torch.profiler), the
quantity a launch-bound GPU pays for.

Usage: python benchmarks/bench_conv.py [--clients 50] [--repeats 7] [--threads 1]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

LAYERS = {"conv1 (1 -> 10, 28 x 28)": (1, 10, 28), "conv2 (10 -> 20, 12 x 12)": (10, 20, 12)}
K = 5


def grouped(x, w, b, n):
    """The engine's way: x [B, n*C, H, W] (channels-last), w [n, O, C, k, k] -> [B, n*O, H', W']."""
    return F.conv2d(x, w.reshape(-1, *w.shape[2:]), b.reshape(-1), groups=n)


def unfolded(x, w, b, n):
    """im2col and one batched matmul: x [B, n*C, H, W] -> the same [B, n*O, H', W'] as `grouped`."""
    B, _, H, W = x.shape
    C, out_channels = w.shape[2], w.shape[1]
    cols = F.unfold(x.reshape(B * n, C, H, W), K)  # [B*n, C*k*k, L]
    L = cols.shape[-1]
    cols = cols.view(B, n, C * K * K, L).permute(1, 2, 0, 3).reshape(n, C * K * K, B * L)
    out = torch.baddbmm(b.unsqueeze(-1), w.reshape(n, out_channels, C * K * K), cols)  # [n, O, B*L]
    side = H - K + 1
    return out.view(n, out_channels, B, side, side).permute(2, 0, 1, 3, 4).reshape(B, n * out_channels, side, side)


def grouped_bf16(x, w, b, n):
    """`grouped` under CPU autocast to bfloat16 (fp32 weights cast at every call, the output read back as fp32): what
    a Config field for bf16 would do. On a processor with AMX (Intel's amx_bf16) oneDNN runs it on the tile unit. It
    moves far more than the last bits (8 bits of mantissa), so it could only ever be a field with a fidelity check."""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return grouped(x, w, b, n).float()


def tensors(n, batch, c, o, hw, grad):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(batch, n * c, hw, hw, generator=g).contiguous(memory_format=torch.channels_last)
    w = (torch.randn(n, o, c, K, K, generator=g) * 0.1).requires_grad_(grad)
    b = (torch.randn(n, o, generator=g) * 0.1).requires_grad_(grad)
    return x.requires_grad_(grad), w, b


def step(f, n, batch, c, o, hw, train):
    x, w, b = tensors(n, batch, c, o, hw, train)

    def one():
        if train:
            out = f(x, w, b, n)
            out.square().mean().backward()
            w.grad = b.grad = x.grad = None
        else:
            with torch.no_grad():
                f(x, w, b, n)
    return one


def operations(f, n, batch, c, o, hw) -> int:
    x, w, b = tensors(n, batch, c, o, hw, True)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        f(x, w, b, n).square().mean().backward()
    events = [e for e in prof.events() if e.name.startswith("aten::")]
    top = [e for e in events if not any(p.name.startswith("aten::") for p in _parents(e))]
    return len(top)


def _parents(e):
    while e.cpu_parent is not None:
        e = e.cpu_parent
        yield e


SIDES = {"grouped": grouped, "unfolded": unfolded, "grouped_bf16": grouped_bf16}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    n = args.clients
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {n} clients, {args.repeats} turns "
          f"(medians; ratio: the median of a side's time / grouped's in the same turn)")
    for name, (c, o, hw) in LAYERS.items():
        for what, batch, train, reps in (("training step, batch 10", 10, True, 20), ("evaluation, 216 a client", 216,
                                                                                       False, 3)):
            sides = {k: step(f, n, batch, c, o, hw, train) for k, f in SIDES.items()}
            times = {k: [] for k in sides}
            for one in sides.values():
                one()
            for _ in range(args.repeats):
                for k, one in sides.items():
                    t = time.perf_counter()
                    for _ in range(reps):
                        one()
                    times[k].append((time.perf_counter() - t) / reps)
            x, w, b = tensors(n, batch, c, o, hw, False)
            ref = grouped(x, w, b, n)
            said = [f"grouped {1e3 * statistics.median(times['grouped']):.2f} ms"]
            for k in [k for k in SIDES if k != "grouped"]:
                ratio = statistics.median(u / g for u, g in zip(times[k], times["grouped"]))
                diff = (ref - SIDES[k](x, w, b, n)).abs().max().item()
                said.append(f"{k} {1e3 * statistics.median(times[k]):.2f} ms ({ratio:.2f}x grouped's time, "
                            f"max |difference| {diff:.1e})")
            print(f"{name}, {what}: " + "; ".join(said))
        print(f"{name}: top-level operations of one forward and backward: grouped "
              f"{operations(grouped, n, 10, c, o, hw)}, unfolded {operations(unfolded, n, 10, c, o, hw)}")


if __name__ == "__main__":
    main()
