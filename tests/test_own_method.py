"""A researcher's own method, defined outside fedlib/algorithms/ (a script, a notebook cell), compared with FedAvg in
a sweep as the review did (ux_round5, problem 1): before, the pool's workers did not know it ("Config.method:
unknown method 'head_averaging'"), a script without the `__main__` guard died with BrokenProcessPool, and after
its code was edited `ex.run` returned the old cached curve."""
import subprocess
import sys
import textwrap

import pytest

from fedlib import algorithms, sweep
from fedlib.algorithms import FedAvg

METHOD = textwrap.dedent("""
    from fedlib.algorithms import REGISTRY, FedAvg
    from fedlib.papers import fedlog
    from fedlib.sweep import run_sweep


    class Shrunk(FedAvg):
        name = "shrunk_fedavg"

        def aggregate(self, rnd, up):
            super().aggregate(rnd, up)
            self.scale = SCALE


    REGISTRY[Shrunk.name] = Shrunk
    """)
SWEEP = textwrap.dedent("""
    configs = [fedlog.paper_config("mnist", m, n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1)
               for m in ("shrunk_fedavg", "fedavg")]
    report = run_sweep(configs, backend=BACKEND, progress=False)
    print("COUNTS", report.cached, report.computed, len(report.failures))
    print("ERRORS", [e.strip().splitlines()[-1] for _, e in report.failures])
    """)


def _run(code: str, tmp_path, as_script: bool):
    env = {"FEDLIB_RESULTS": str(tmp_path / "results"), "FEDLIB_WORKERS": "2", "PATH": "/usr/bin:/bin",
           "FEDLIB_PROGRESS": "0"}
    import os

    env = {**os.environ, **env}
    if as_script:
        script = tmp_path / "compare.py"
        script.write_text(code)
        return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
    # python -c: a __main__ without a file, as a notebook's kernel has (the workers cannot import it)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)


def _counts(out: str) -> tuple[int, int, int]:
    line = next(line for line in out.splitlines() if line.startswith("COUNTS"))
    return tuple(int(x) for x in line.split()[1:])


def _all_counts(out: str) -> list[tuple[int, int, int]]:
    return [tuple(int(x) for x in line.split()[1:]) for line in out.splitlines() if line.startswith("COUNTS")]


def test_an_own_method_in_a_script_is_compared_on_the_pool_and_computed_again_after_an_edit(tmp_path):
    body = METHOD.replace("SCALE", "1") + "\n\nif __name__ == '__main__':\n" + textwrap.indent(
        SWEEP.replace("BACKEND", "'pool'"), "    ")  # a script starts a pooled sweep under the usual guard
    first = _run(body, tmp_path, as_script=True)
    assert first.returncode == 0, first.stderr[-3000:]
    assert _counts(first.stdout) == (0, 2, 0), first.stdout + first.stderr[-2000:]
    assert _counts(_run(body, tmp_path, as_script=True).stdout) == (2, 0, 0)  # unchanged: both from the cache
    edited = _run(body.replace("self.scale = 1", "self.scale = 2"), tmp_path, as_script=True)
    assert _counts(edited.stdout) == (1, 1, 0)  # its code changed: computed again; FedAvg's from the cache


@pytest.mark.parametrize("backend", ["pool", "ray"])
def test_an_own_method_in_a_notebook_cell_is_compared_and_computed_again_after_the_cell_is_edited(backend,
                                                                                                   tmp_path):
    """One process, as a notebook's kernel: the cell is run, run again, then edited and run again."""
    if backend == "ray":
        pytest.importorskip("ray")
    sweep_cell = SWEEP.replace("BACKEND", repr(backend))
    kernel = (METHOD.replace("SCALE", "1") + sweep_cell + sweep_cell + METHOD.replace("SCALE", "2") + sweep_cell)
    done = _run(kernel, tmp_path, as_script=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _all_counts(done.stdout) == [(0, 2, 0), (2, 0, 0), (1, 1, 0)], done.stdout + done.stderr[-2000:]


def test_a_script_that_starts_a_pooled_sweep_unguarded_is_told_the_line_before_any_worker_starts(tmp_path):
    body = METHOD.replace("SCALE", "1") + SWEEP.replace("BACKEND", "'pool'")
    done = _run(body, tmp_path, as_script=True)
    assert done.returncode != 0 and "BrokenProcessPool" not in done.stderr
    assert "compare.py, line" in done.stderr and 'if __name__ == "__main__":' in done.stderr
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.json"))


class _Mine(FedAvg):
    name = "mine_for_the_key_test"
    factor = 1


def test_a_method_outside_fedlib_has_its_code_in_its_key_and_fedlibs_own_keep_theirs(monkeypatch):
    from fedlib.papers import fedlog

    monkeypatch.setattr(algorithms, "REGISTRY", {**algorithms.REGISTRY, _Mine.name: _Mine})
    assert algorithms.code_digest(FedAvg) is None  # shipped keys unchanged (pinned in tests/test_run_sets.py)
    cfg = fedlog.paper_config("mnist", _Mine.name, n_clients=4, train_fraction=0.01, rounds=1)
    before = cfg.key()
    monkeypatch.setattr(_Mine, "aggregate", lambda self, rnd, up: FedAvg.aggregate(self, rnd, up), raising=False)
    assert cfg.key() != before  # an edited method is another method
    monkeypatch.delattr(_Mine, "aggregate")
    assert cfg.key() == before  # the same code, the same key (no address, file name or line number in it)
    blob = sweep.methods_by_value([cfg])[_Mine.name]
    import cloudpickle

    assert algorithms.code_digest(cloudpickle.loads(blob)) == algorithms.code_digest(_Mine)  # a worker's key


SHRINK = 0.5  # a module-level constant the method below reads


def _shrink(x):  # a module-level helper the method below calls
    return x * SHRINK


class _Helped(FedAvg):
    name = "helped_for_the_key_test"

    def aggregate(self, rnd, up):
        return _shrink(FedAvg.aggregate(self, rnd, up))


def test_editing_a_helper_or_a_constant_a_method_reaches_moves_its_key(monkeypatch):
    """Before, `code_digest` hashed the class's own functions only: an edit to a module-level helper the method calls,
    or to a constant it reads, left the key as it was and the cached result was served stale."""
    before = algorithms.code_digest(_Helped)
    monkeypatch.setattr(sys.modules[__name__], "SHRINK", 0.25)
    assert algorithms.code_digest(_Helped) != before  # a constant it reads, through its helper
    monkeypatch.setattr(sys.modules[__name__], "SHRINK", 0.5)
    assert algorithms.code_digest(_Helped) == before
    monkeypatch.setattr(sys.modules[__name__], "_shrink", lambda x: x * SHRINK * 1.0)
    assert algorithms.code_digest(_Helped) != before  # the helper itself


OWN_FILE = textwrap.dedent("""
    from fedlib.algorithms import LGFedAvg


    class HeadsOnly(LGFedAvg):  # a method of one's own, in one small file: LG-FedAvg sharing the last layer only
        name = "heads_only_test"
        defaults = {**LGFedAvg.defaults, "global_layers": 1}
    """)


def test_your_own_method_from_the_command_line_with_a_comparison_table(tmp_path, monkeypatch, capsys):
    """Before, a method in your own file answered `GridError: unknown method` from `fedlib sweep`, and a sweep gave one
    row per run, no comparison. Now `--methods FILE.py` runs it as the built-ins are, and `--against fedavg` writes
    one row per grid cell (mean +- SE over its seeds) with a paired test over the same seeds, as the claims' rule;
    `SweepReport.summary` gives the same numbers from Python."""
    import csv
    import json

    from fedlib import __main__ as cli
    from fedlib.papers import fedlog

    monkeypatch.setattr(algorithms, "REGISTRY", algorithms.base._Registry(algorithms.REGISTRY))
    monkeypatch.setattr(algorithms.base, "REGISTRY", algorithms.REGISTRY)
    (tmp_path / "my_method.py").write_text(OWN_FILE)
    small = dict(dataset="mnist", n_clients=4, train_fraction=0.005, rounds=2, local_epochs=1)
    (tmp_path / "grid.json").write_text(json.dumps({"base": small, "grid": {
        "method": ["heads_only_test", "fedavg"], "lr": [0.001, 0.003], "seed": [0, 1, 2]}}))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["sweep", "--methods", "my_method.py", "--grid", "grid.json", "--against", "fedavg",
                     "--out", "t.csv", "--backend", "local"]) == 0
    with open(tmp_path / "t.summary.csv", newline="") as f:
        cells = list(csv.DictReader(f))
    assert [(c["method"], c["lr"], c["seeds"]) for c in cells] == [("heads_only_test", "0.001", "3"),
                                                                   ("heads_only_test", "0.003", "3"),
                                                                   ("fedavg", "0.001", "3"), ("fedavg", "0.003", "3")]
    ours = cells[0]
    assert ours["against"] == "fedavg" and ours["paired_seeds"] == "3" and ours["verdict"]
    configs = [ex_cfg for ex_cfg in sweep.expand_grid(json.loads((tmp_path / "grid.json").read_text()),
                                                      paper_config=fedlog.paper_config)]
    frame = sweep.run_sweep(configs, backend="local", progress=False).summary(configs, against="fedavg")
    assert float(ours["final_acc_mean"]) == pytest.approx(frame.loc[0, "final_acc_mean"])
    assert float(ours["final_acc_se"]) == pytest.approx(frame.loc[0, "final_acc_se"])
    assert ours["p_higher"] == "" or float(ours["p_higher"]) == pytest.approx(frame.loc[0, "p_higher"])
    assert "per grid cell, over its seeds (paired against fedavg)" in capsys.readouterr().out


def test_a_method_of_your_own_may_not_take_a_name_of_fedlibs():
    """Before, `REGISTRY["fedavg"] = Mine` was accepted, and every command then warned about archive keys."""
    class Mine(FedAvg):
        pass

    with pytest.raises(ValueError, match="fedlib's own method"):
        algorithms.REGISTRY["fedavg"] = Mine
    assert algorithms.REGISTRY["fedavg"] is FedAvg
