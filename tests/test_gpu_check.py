"""The GPU issue's script and switch, as far as a CPU can check them: arguments, FEDLIB_DEVICE, device-keyed runs."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedlib import engine
from fedlib.papers import fedlog

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "gpu_check.sh"


def _run(*args, env=None):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHON": sys.executable, **(env or {})})


def test_the_script_refuses_bad_arguments_before_doing_anything(tmp_path):
    assert _run().returncode == 2
    assert "unknown part" in _run(tmp_path, tmp_path / "out", "benchmark").stderr
    missing = _run(tmp_path / "nowhere", tmp_path / "out")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert not (tmp_path / "out").exists()


def test_the_env_part_runs_on_the_cpu_through_the_same_path(tmp_path):
    """...and offline, as on the GPU machine, which reaches no package index (an isolated build of fedlib wanted
    setuptools from one there, 2026-11-26)."""
    (tmp_path / "deps" / "wheels").mkdir(parents=True)
    res = _run(tmp_path / "deps", tmp_path / "out", "env", env={"FEDLIB_DEVICE": "cpu", "PIP_NO_INDEX": "1"})
    assert res.returncode == 0, res.stderr[-2000:]
    assert "device cpu" in (tmp_path / "out" / "env.log").read_text()


def test_fedlib_device_decides_auto_and_the_cache_key_keeps_devices_apart(monkeypatch):
    monkeypatch.setenv("FEDLIB_DEVICE", "cpu")
    assert engine.resolve_device("auto").type == "cpu"
    auto = fedlog.table1_config("mnist", "FedAvg")
    assert auto.key() == fedlog.table1_config("mnist", "FedAvg", device="cpu").key()
    assert auto.key() != fedlog.table1_config("mnist", "FedAvg", device="cuda").key()
    monkeypatch.setenv("FEDLIB_DEVICE", "tpu9")
    with pytest.raises(ValueError, match="FEDLIB_DEVICE"):
        engine.resolve_device("auto")
    if not engine.torch.cuda.is_available():
        monkeypatch.setenv("FEDLIB_DEVICE", "cuda")
        with pytest.raises(ValueError, match="no CUDA device"):
            engine.resolve_device("auto")


DEPS_SCRIPT = SCRIPT.parent / "gpu_deps.py"


def _deps(*args, data_dir):
    return subprocess.run([sys.executable, str(DEPS_SCRIPT), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "FEDLIB_DATA": str(data_dir)})


def test_the_deps_script_carries_the_same_arrays_compressed_and_refuses_what_is_missing(tmp_path):
    import numpy as np

    src = tmp_path / "data"
    src.mkdir()
    arrays = {"x_train": np.zeros((200, 28, 28), np.uint8), "y_train": np.arange(200) % 10,
              "x_test": np.full((50, 28, 28), 7, np.uint8), "y_test": np.arange(50) % 10}
    np.savez(src / "mnist.npz", **arrays)
    res = _deps(tmp_path / "deps", "--no-wheels", "--data", "mnist", data_dir=src)
    assert res.returncode == 0, res.stderr[-2000:]
    out = tmp_path / "deps" / "data" / "mnist.npz"
    with np.load(out) as z:
        assert sorted(z.files) == sorted(arrays) and all(np.array_equal(z[k], v) for k, v in arrays.items())
    assert out.stat().st_size < (src / "mnist.npz").stat().st_size / 10
    missing = _deps(tmp_path / "deps2", "--no-wheels", "--data", "fashion_mnist", data_dir=src)
    assert missing.returncode != 0 and "fetch-data" in missing.stderr + missing.stdout
    bad = _deps(tmp_path / "deps3", "--no-wheels", "--pfllib", tmp_path, data_dir=src)
    assert bad.returncode == 2 and "system/main.py" in bad.stderr and not (tmp_path / "deps3").exists()


def test_a_run_on_cuda_computes_in_full_fp32_with_deterministic_convolutions():
    """The flags only (no GPU needed to set them): TF32 was on for cuDNN's convolutions on the H200, and tests
    comparing at 1e-5 failed there (2026-11-26). A CPU run leaves them as they are."""
    b = engine.torch.backends
    flags = [(b.cuda.matmul, "allow_tf32"), (b.cudnn, "allow_tf32"), (b.cudnn, "benchmark"), (b.cudnn, "deterministic")]
    saved = [getattr(o, n) for o, n in flags]
    try:
        for (o, n), v in zip(flags, (True, True, True, False)):
            setattr(o, n, v)
        engine.full_fp32(engine.torch.device("cpu"))
        assert b.cudnn.allow_tf32 and not b.cudnn.deterministic
        engine.full_fp32(engine.torch.device("cuda"))
        assert not b.cuda.matmul.allow_tf32 and not b.cudnn.allow_tf32 and not b.cudnn.benchmark
        assert b.cudnn.deterministic
    finally:
        for (o, n), v in zip(flags, saved):
            setattr(o, n, v)


def test_a_population_built_directly_on_cuda_computes_in_full_fp32_too():
    """bench_round.py builds its Populations without experiments.setup, so its CUDA timings ran with PyTorch's
    default TF32. The flags are set before any tensor moves, so a CPU checks it (the move then fails)."""
    from fedlib import models

    b = engine.torch.backends
    saved = b.cudnn.allow_tf32, b.cudnn.deterministic
    try:
        b.cudnn.allow_tf32, b.cudnn.deterministic = True, False
        try:
            engine.Population.create([models.build("cnn_mnist", (1, 28, 28), 10)], same_init=True, device="cuda")
        except (RuntimeError, AssertionError):  # no CUDA here
            pass
        assert not b.cudnn.allow_tf32 and b.cudnn.deterministic
    finally:
        b.cudnn.allow_tf32, b.cudnn.deterministic = saved


def test_the_paper_part_refuses_a_bad_job_count_or_set_before_running_anything(tmp_path):
    (tmp_path / "deps").mkdir()
    env = {"FEDLIB_DEVICE": "cpu", "GPU_RESULTS": str(tmp_path / "results")}
    jobs = _run(tmp_path / "deps", tmp_path / "out", "paper", env={**env, "PAPER_JOBS": "0"})
    assert jobs.returncode == 2 and "PAPER_JOBS=0" in jobs.stderr
    unknown = _run(tmp_path / "deps", tmp_path / "out", "paper", env={**env, "PAPER_SETS": "fedcr_table2_n9"})
    assert unknown.returncode == 2 and "fedcr_table2_n9" in unknown.stderr
    assert not (tmp_path / "results").exists() and not (tmp_path / "out" / "paper_runs.log").exists()


def test_the_env_part_goes_on_without_wheels_and_names_what_it_could_not_install(tmp_path):
    """A DEPS prepared for paper runs alone (`gpu_deps.py DEPS --no-wheels`, to leave room for the data) has no
    wheels/: the env part stopped there, before the paper part could run."""
    (tmp_path / "deps").mkdir()
    fake = tmp_path / "py"  # this interpreter, but every import check says "missing" for one package
    fake.write_text(f"#!/bin/sh\nif [ \"$1\" = - ]; then echo fedlib-no-such-package; exit 0; fi\nexec {sys.executable} \"$@\"\n")
    fake.chmod(0o755)
    res = subprocess.run(["bash", str(SCRIPT), tmp_path / "deps", tmp_path / "out", "env"], capture_output=True,
                         text=True, env={**os.environ, "PYTHON": str(fake), "FEDLIB_DEVICE": "cpu",
                                         "PIP_NO_INDEX": "1"})
    assert res.returncode == 0, res.stderr[-2000:]
    assert "not installed (no wheels for them" in res.stdout and "fedlib-no-such-package" in res.stdout
    assert "device cpu" in (tmp_path / "out" / "env.log").read_text()
