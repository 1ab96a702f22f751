"""Prepare the DEPS folder that scripts/gpu_check.sh reads on a GPU machine that cannot download anything.

    python scripts/gpu_deps.py DEPS [--data mnist fashion_mnist] [--pfllib PFLLIB_CHECKOUT] [--no-wheels]

DEPS/wheels: the pure-Python packages the GPU machine's image lacks (the `env` part installs them), for CPython 3.12
on x86-64 Linux, each at the version seen to install there on 2026-11-26 (dp-accounting needs attrs below 24, older
than the image's, so attrs travels too). DEPS/data: the named datasets' verified arrays from FEDLIB_DATA, saved
compressed (MNIST 55 -> 11.5 MB, FashionMNIST 55 -> 30.9 MB): the working tree and what a call carries must stay
under 64 MiB, so a call may carry one dataset and not the other. DEPS/PFLlib/system: PFLlib's code for the `pfllib`
part (its main.py also imports cvxpy, which the image lacks and this script does not fetch).
The script prints the folder's size and what is over the limit.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

WHEELS = [  # name==version, as installed on the H200 image (python 3.12.3, torch 2.11.0) on 2026-11-26
    "asttokens==3.0.2", "attrs==23.2.0", "comm==0.2.3", "debugpy==1.8.22", "dm-tree==0.1.10",
    "dp-accounting==0.6.0", "entrypoints==0.4.2", "executing==2.3.0", "fastjsonschema==2.22.3",
    "ipykernel==7.4.0", "ipython==9.18.1", "ipython-pygments-lexers==1.1.1", "jedi==0.20.1", "jsonschema==4.26.0",
    "jsonschema-specifications==2025.9.1", "jupyter-client==8.10.0", "jupyter-core==5.9.1", "jupytext==1.19.6",
    "matplotlib-inline==0.2.2", "mdit-py-plugins==0.7.0", "nbclient==0.11.0", "nbformat==5.11.1", "nbval==0.11.0",
    "nest-asyncio2==1.7.4", "pandas-flavor==0.8.1", "papermill==2.7.0", "parso==0.8.7", "pexpect==4.9.0",
    "pingouin==0.7.0", "platformdirs==4.14.8", "prompt-toolkit==3.0.53", "ptyprocess==0.7.0", "pure-eval==0.2.4",
    "pyzmq==27.3.0", "referencing==0.37.0", "rpds-py==2026.9.1", "stack-data==0.6.3", "tenacity==9.2.1",
    "tornado==6.6.1", "traitlets==5.16.1", "tzdata==2026.6", "wcwidth==0.9.4",
]
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_26_x86_64", "manylinux_2_24_x86_64",
             "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_5_x86_64", "manylinux1_x86_64"]
LIMIT = 64 * 2 ** 20  # what one device call may carry, the working tree included


def wheels(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
           "3.12", "--implementation", "cp", *sum((["--platform", p] for p in PLATFORMS), []), "-d", str(folder),
           *WHEELS]
    subprocess.run(cmd, check=True)


def compress(name: str, source: Path, target: Path) -> Path:
    """`source`/<name>.npz (fedlib's verified cache; `python -m fedlib fetch-data` writes it) saved compressed."""
    path = source / f"{name}.npz"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run `python -m fedlib fetch-data` first (or set FEDLIB_DATA)")
    target.mkdir(parents=True, exist_ok=True)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    out = target / f"{name}.npz"
    tmp = target / f".{name}.tmp.npz"
    np.savez_compressed(tmp, **arrays)
    tmp.replace(out)
    return out


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("deps", type=Path)
    p.add_argument("--data", nargs="*", default=["mnist", "fashion_mnist"], choices=["mnist", "fashion_mnist"])
    p.add_argument("--pfllib", type=Path, help="a checkout of TsingZ0/PFLlib (its system/ folder is copied)")
    p.add_argument("--no-wheels", action="store_true")
    args = p.parse_args()
    if args.pfllib is not None and not (args.pfllib / "system" / "main.py").exists():
        p.error(f"{args.pfllib} holds no system/main.py: give a checkout of TsingZ0/PFLlib")
    from fedlib import data

    source = data.data_dir()
    if not args.no_wheels:
        wheels(args.deps / "wheels")
    for name in args.data:
        compress(name, source, args.deps / "data")
    if args.pfllib is not None:
        shutil.copytree(args.pfllib / "system", args.deps / "PFLlib" / "system", dirs_exist_ok=True)
    total = size(args.deps)
    print(f"{args.deps}: {total / 2 ** 20:.1f} MiB; with the working tree a call may carry {LIMIT / 2 ** 20:.0f} MiB"
          + (" (over: carry one dataset a call)" if total > LIMIT * 0.7 else ""))


if __name__ == "__main__":
    main()
