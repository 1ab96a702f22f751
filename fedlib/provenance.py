"""Which code produced a result: a fingerprint of the fedlib sources that determine numbers.

The fingerprint hashes the syntax tree of every fedlib module except those that only present, store or
schedule results (`NOT_NUMERIC`) and the papers' files other than their `analysis` (`_is_numeric`), with docstrings
removed: a comment, a docstring or a reformatting leaves it
unchanged; any change to what the code computes changes it. It is computed from the files themselves, so it
works the same from a git checkout, a tarball or an installed package, and it sees uncommitted edits, which a
commit hash alone does not (the commit and a dirty flag are recorded beside it, for people). It is recorded in
every result, not added to the cache key, so existing keys, pinned tests and archived runs stay valid.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import subprocess
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
NOT_NUMERIC = {"__main__", "archive", "book", "cache", "claims", "freshness", "notebook_run", "outputs", "paths", "plots",
               "progress", "provenance", "stats", "sweep"}  # top-level modules (or packages: claims) that present,
# store or schedule
PAPERS = "papers"  # fedlib/papers/<paper>/: the papers' numbers, Config builders, run plans, figures and claims are
NUMERIC_IN_PAPERS = "analysis"  # left out; what a paper computes that is not a run (`analysis.py`, or any file under
# an `analysis/` folder) is numeric code and is in


def _is_numeric(rel: Path) -> bool:
    """The folder rule: a file of fedlib/ (path `rel` inside it) is numeric unless it is a presentation module at the
    top level, or a file under papers/ that is not its paper's `analysis`."""
    if rel.parts[0] == PAPERS:
        return NUMERIC_IN_PAPERS in rel.parts[1:-1] or rel.stem == NUMERIC_IN_PAPERS
    return (rel.parts[0] if len(rel.parts) > 1 else rel.stem) not in NOT_NUMERIC  # a module, or a package by role


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def numeric_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if _is_numeric(p.relative_to(PACKAGE)))


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    h = hashlib.sha256()
    for p in numeric_modules():
        h.update(str(p.relative_to(PACKAGE)).encode())
        h.update(ast.dump(_without_docstrings(ast.parse(p.read_text()))).encode())
    return h.hexdigest()[:12]


@functools.lru_cache(maxsize=1)
def commit() -> dict:
    """The git commit of the checkout and whether fedlib has uncommitted changes (empty outside a checkout)."""
    try:
        run = lambda *a: subprocess.run(["git", *a], cwd=PACKAGE, capture_output=True, text=True, timeout=10)  # noqa
        head = run("rev-parse", "--short=12", "HEAD")
        if head.returncode:
            return {}
        return {"commit": head.stdout.strip(), "dirty": bool(run("status", "--porcelain", "--", ".").stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {}


def tcmalloc_library() -> str:
    """The path of tcmalloc's library where it is installed (Debian's libtcmalloc-minimal4, found by `ldconfig -p`),
    else ''. Preloaded, it keeps freed memory for the next tensor where glibc hands large blocks back to the kernel,
    which zeroes them again at the next touch: the same bits, less system time (scripts/background_slot.sh,
    `python -m fedlib check`, benchmarks/bench_wide.py)."""
    try:
        found = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return ""
    paths = [line.split("=>")[-1].strip() for line in found if line.strip().startswith("libtcmalloc_minimal.so.4 ")]
    return next((p for p in paths if Path(p).exists()), "")


def machine() -> str:
    """The kind of processor the numbers come from (CPUs of another kind may round differently): the architecture,
    torch's kernel set and, where /proc/cpuinfo tells, the vendor, family and model, e.g.
    `x86_64-AVX512-AuthenticAMD-26-2`. The kernel set alone does not decide: an AMD CPU and the one that made most
    shipped runs, both AVX512, round some kernels differently. Results made before the vendor was recorded say
    `x86_64-AVX512` only, which matches no processor now, so they are compared within a tolerance everywhere."""
    import platform

    import torch

    kind = f"{platform.machine()}-{torch.backends.cpu.get_cpu_capability()}"
    cpu = _cpuinfo()
    if cpu.get("vendor_id"):
        kind += "-" + "-".join(cpu.get(k, "?") for k in ("vendor_id", "cpu family", "model"))
    return kind


@functools.lru_cache(maxsize=1)
def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of /proc/cpuinfo (empty where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    fields = {}
    for line in text.split("\n\n")[0].splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


_read: set[tuple[str, str]] = set()  # (fingerprint, device) of every result read since the notebook started


def note(result: dict) -> dict:
    """Remember which code and device a result read by a notebook came from (tables list them); returns it."""
    code = result.get("code") or {}
    where = code.get("gpu") or code.get("machine", "?")  # a GPU run: the GPU's name (its rounding's), else the CPU's kind
    _read.add((code.get("fingerprint", "unrecorded"), f"{result.get('device', '?')}:{where}"))
    return result


def forget() -> None:
    _read.clear()


def read_so_far() -> dict[str, str]:
    """The fingerprints and devices of the results read so far (empty when none), for a table's columns."""
    if not _read:
        return {}
    return {"code": " ".join(sorted({f for f, _ in _read})), "device": " ".join(sorted({d for _, d in _read}))}


def record(device=None) -> dict:
    """What a result stores about its code and the machine kind that ran it; for a run on a GPU (`device` a CUDA
    torch.device) also the GPU's name, which decides its rounding as the processor's kind does a CPU run's."""
    out = {"fingerprint": fingerprint(), **commit(), "machine": machine()}
    if gpu_name(device) is not None:
        out["gpu"] = gpu_name(device)
    return out


def gpu_name(device=None) -> str | None:
    """The GPU's name for a CUDA torch.device (None for any other device, or none)."""
    if device is None or device.type != "cuda":
        return None
    import torch

    return torch.cuda.get_device_name(device)
