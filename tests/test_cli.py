"""`python -m fedlib`: every Config field settable, defaults and choices shown, one-line errors."""
import json
import os
import subprocess
import sys

import pytest

from fedlib import sweep
from fedlib.__main__ import build_parser, main, parse_option, run_config
from fedlib.papers import fedlog


def _config(*argv):
    return run_config(build_parser().parse_args(["run", *argv]))


def test_every_config_field_can_be_set_and_zero_is_not_missing():
    cfg = _config("--method", "fedavg", "--n-clients", "3", "--local-epochs", "1", "--rounds", "2",
                  "--participation", "0.5", "--no-same-init", "--optimizer", "sgd", "--momentum", "0.5",
                  "--lr", "0.05", "--train-fraction", "0.01", "--final-finetune-epochs", "1", "--device", "cpu")
    assert (cfg.n_clients, cfg.local_epochs, cfg.rounds, cfg.participation, cfg.same_init, cfg.momentum) == \
        (3, 1, 2, 0.5, False, 0.5)
    assert cfg.batch_size == fedlog.PAPER_SETTINGS["mnist"]["batch_size"]  # the rest from the paper setting
    with pytest.raises(ValueError, match="Config.rounds must be an integer >= 1, got 0"):
        _config("--rounds", "0")
    assert _config("--no-paper-setting", "--rounds", "3").n_clients == 50


def test_options_are_json_or_plain_strings():
    assert parse_option("dp=local") == ("dp", "local") and parse_option("epsilon=2") == ("epsilon", 2)
    assert parse_option("clip_b=null") == ("clip_b", None)
    assert _config("--option", "dp=local", "--option", "epsilon=0.5").options == {"dp": "local", "epsilon": 0.5}
    with pytest.raises(ValueError, match="--option needs key=value"):
        parse_option("epsilon")


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "fedlib", *argv], capture_output=True, text=True)


def test_errors_are_one_line_and_debug_shows_the_traceback():
    res = _cli("run", "--rounds", "-3")
    assert res.returncode == 1 and res.stderr.strip() == \
        "fedlib: error: ValueError: Config.rounds must be an integer >= 1, got -3"
    res = _cli("--debug", "run", "--option", "head_solver=foo")
    assert res.returncode == 1 and "Traceback" in res.stderr and "option head_solver" in res.stderr
    res = _cli("fetch-data", "bogus")
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1 and "choose one of" in res.stderr
    assert main(["sweep", "--grid", "x.json", "--threads", "-1"]) == 2


def test_fetch_data_says_it_runs_apt_get_update_before_it_does(monkeypatch, capsys):
    # before: a missing FashionMNIST ran `apt-get update` (it rewrites the machine's package lists) without a word
    from fedlib import __main__ as cli
    from fedlib import data

    calls = []

    def load(name):
        if not calls:
            raise data.DatasetNotFound(f"{name}: not here")
        return type("DS", (), {"train_y": [0] * 3, "test_y": [0]})()

    def run(cmd, **kw):
        calls.append((cmd, capsys.readouterr().out))  # what had been said when the command started
        return subprocess.CompletedProcess(cmd, 100)

    monkeypatch.setattr(data, "load_dataset", load)
    monkeypatch.setattr(cli.shutil, "which", lambda name: "/usr/bin/apt-get")
    monkeypatch.setattr(cli.subprocess, "run", run)
    assert cli.fetch_data(["fashion_mnist"]) == 0
    (cmd, said_before), = calls
    assert cmd == ["apt-get", "update", "-qq"] and "running `apt-get update -qq`" in said_before
    assert "`apt-get update` failed" in capsys.readouterr().err  # its exit status 100 is reported


def test_help_and_list_show_methods_datasets_defaults_and_profiles():
    text = _cli("run", "--help").stdout
    assert "fedlog_c" in text and "fashion_mnist" in text and "(default: fedlog)" in text
    assert "--participation" in text and "--pool-split" in text
    out = _cli("list").stdout
    assert "head_solver='exact'" in out and "[full participation only]" in out
    assert "mnist" in out and ("here" in out or "missing" in out) and "smoke" in out and "paper" in out


def test_a_run_says_where_its_result_is_cached(tmp_path, monkeypatch, capsys):
    argv = ["run", "--method", "fedavg", "--n-clients", "4", "--train-fraction", "0.01", "--rounds", "1",
            "--local-epochs", "1"]
    assert main(argv) == 0
    assert "computed and cached" in capsys.readouterr().err
    assert main(argv) == 0
    assert "from the cache" in capsys.readouterr().err


def test_a_local_ray_cluster_is_capped(monkeypatch):
    monkeypatch.setenv("FEDLIB_RAY_CPUS", "1")
    assert sweep.local_cluster_cpus() == 1
    monkeypatch.setenv("FEDLIB_RAY_CPUS", "1000")
    assert sweep.local_cluster_cpus() == os.cpu_count()  # never more than the cores
    monkeypatch.setenv("FEDLIB_RAY_CPUS", "0")
    with pytest.raises(ValueError, match="FEDLIB_RAY_CPUS"):
        sweep.local_cluster_cpus()


def test_run_prints_the_accuracy_after_the_final_fine_tune_beside_the_last_rounds():
    # before: only the last round's metrics were printed, so FedCR printed 0.676 where the fine-tuned 0.739 counted
    from fedlib.__main__ import printed_metrics

    res = {"rounds": {"acc_mean": [0.5, 0.676], "participants": [[0]]}, "final": {"acc_mean": 0.739, "client_acc": [1]}}
    out = printed_metrics(res)
    assert out == {"last_round": {"acc_mean": 0.676}, "after_final_finetune": {"acc_mean": 0.739}}
    assert printed_metrics({"rounds": {"acc_mean": [0.5]}}) == {"last_round": {"acc_mean": 0.5}}


def test_an_interpreter_whose_fedlib_is_another_checkout_is_refused(tmp_path):
    # before: FEDLIB_PYTHON with another clone's editable fedlib ran that clone's code and wrote its figures/, exit 0
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    (clone / "notebooks").mkdir()
    shutil.copy(root / "scripts" / "env.sh", clone / "scripts" / "env.sh")
    (clone / "pyproject.toml").write_text("")
    done = subprocess.run(["bash", "-c", "source scripts/env.sh"], cwd=clone, capture_output=True, text=True,
                          env={**os.environ, "FEDLIB_PYTHON": sys.executable})
    assert done.returncode == 2 and "not from this checkout" in done.stderr and str(root) in done.stderr


def test_run_all_refuses_a_number_that_names_no_notebook():
    # before: ./run_all.sh 04 7 ran 04 and silently ignored 7
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(["bash", str(root / "run_all.sh"), "04", "9"], capture_output=True, text=True,
                          env={**os.environ, "FEDLIB_PYTHON": sys.executable, "FEDLIB_PROFILE": "smoke"})
    assert done.returncode == 2 and "no notebook 09" in done.stderr


def test_run_all_checks_its_arguments_and_profile_before_any_install():
    # before: ./run_all.sh 1 installed, loaded the data and took 25 s to say "no notebook 1"; now 1 means 01, and a
    # bad argument or profile is refused before scripts/env.sh (here an interpreter that does not exist) is reached
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "FEDLIB_PYTHON": "/nonexistent/python"}
    for args, extra, said in ((["99"], {}, "no notebook 99"), (["1", "x"], {}, "no notebook x"),
                              (["--bok"], {}, "unknown option --bok: ./run_all.sh [--book]"),
                              (["1"], {"FEDLIB_PROFILE": "papr"}, "FEDLIB_PROFILE must be")):
        done = subprocess.run(["bash", str(root / "run_all.sh"), *args], capture_output=True, text=True,
                              env={**env, **extra}, timeout=10)
        assert done.returncode == 2 and said in done.stderr and "nonexistent" not in done.stderr


def test_the_cli_explains_itself_and_suggests_the_nearest_name(capsys):
    from dataclasses import fields

    from fedlib.__main__ import build_parser, main
    from fedlib.config import Config, field_help

    parser = build_parser()
    assert "python -m fedlib run --method fedlog" in parser.format_help()  # the examples, not only the first line
    for name, sub in parser._subparsers._group_actions[0].choices.items():
        assert sub.description, name  # every subcommand says what it does
    helps = field_help()
    assert all(helps.get(f.name) for f in fields(Config))  # every Config field has a help text
    with pytest.raises(SystemExit):
        main(["run", "--method", "fedavgg"])
    assert "did you mean 'fedavg'" in capsys.readouterr().err
    assert main(["run", "--method", "fedavg", "--option", "agregation=full", "--rounds", "1"]) == 1
    assert "did you mean 'aggregation'" in capsys.readouterr().err


def test_a_moved_clone_reinstalls_itself_into_its_own_venv(tmp_path):
    """Before: after `mv clone elsewhere`, ./run_all.sh printed only `ModuleNotFoundError: No module named 'fedlib'`
    (scripts/env.sh's own check died first). The .venv inside the clone still works, but its editable install names
    the old folder: env.sh now sees it and reinstalls this checkout into that .venv."""
    import shutil
    import subprocess
    import sys
    import sysconfig
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    old = tmp_path / "old"
    (old / "scripts").mkdir(parents=True)
    (old / "notebooks").mkdir()
    shutil.copy(root / "scripts" / "env.sh", old / "scripts" / "env.sh")
    shutil.copy(root / "pyproject.toml", old / "pyproject.toml")
    shutil.copytree(root / "fedlib", old / "fedlib", ignore=shutil.ignore_patterns("__pycache__"))
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(old / ".venv")], check=True)
    venv_py = old / ".venv" / "bin" / "python"
    site = subprocess.run([str(venv_py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # the dependencies (pip, setuptools, torch, ...) from this environment's site-packages, not its fedlib
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(venv_py), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(old)],
                   check=True, capture_output=True)
    new = tmp_path / "new"
    old.rename(new)
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("FEDLIB_PYTHON", "VIRTUAL_ENV", "CONDA_PREFIX")}
    done = subprocess.run(["bash", "-c", "source scripts/env.sh && cd notebooks && \"$PY\" -c 'import fedlib; print(fedlib.__file__)'"],
                          cwd=new, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "was this clone moved or copied?" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == str(new / "fedlib" / "__init__.py")


def test_help_answers_without_importing_torch_or_the_methods():
    """`fedlib --help` took 6-7 s: building the parser imported torch and every method for `run`'s lists."""
    import subprocess
    import sys
    import time

    probe = ("import runpy, sys\nsys.argv = ['fedlib', '--help']\ntry:\n    runpy.run_module('fedlib', "
             "run_name='__main__')\nexcept SystemExit:\n    pass\nprint('torch' in sys.modules, "
             "'fedlib.algorithms' in sys.modules)")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split()[-2:] == ["False", "False"] and "sweep" in done.stdout
    assert time.perf_counter() - start < 5  # generous: it takes about 0.1 s


def test_every_example_in_the_help_builds_a_config_its_method_accepts():
    """The help's example passed `--option alpha=0.1` to fedlog, which has no such option."""
    import shlex

    from fedlib import __main__ as cli
    from fedlib import algorithms

    examples = [line.split("python -m fedlib ", 1)[1] for line in cli.__doc__.splitlines()
                if "python -m fedlib run " in line]
    assert examples
    for example in examples:
        argv = shlex.split(example.split("#")[0])
        cfg = cli.run_config(build_parser().parse_args(argv))
        algorithms.make(cfg.method, **cfg.options)  # raises on an unknown option


_TINY_GRID = {"base": {"method": "fedavg", "dataset": "mnist", "n_clients": 4, "train_fraction": 0.01, "rounds": 1,
                       "local_epochs": 1}, "grid": {"seed": [0, 1]}}


def test_a_sweep_writes_one_row_per_run_and_prints_them(tmp_path, monkeypatch, capsys):
    """Before: `fedlib sweep` printed "4 runs: 0 from the cache, 4 computed, 0 failed" and nothing else."""
    import csv
    import json

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(_TINY_GRID))
    out = tmp_path / "runs.csv"
    assert main(["sweep", "--grid", str(grid), "--backend", "local", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [(r["run"], r["seed"], r["status"]) for r in rows] == [("fedavg", "0", "ok"), ("fedavg", "1", "ok")]
    assert all(0 <= float(r["final_acc"]) <= 1 and float(r["up_mb"]) > 0 and float(r["seconds"]) > 0 for r in rows)
    printed = capsys.readouterr().out
    assert "final_acc" in printed and rows[1]["final_acc"] in printed and "2 computed and cached" in printed


def test_a_sweep_whose_results_could_not_be_cached_says_where_they_are_and_fails(tmp_path, monkeypatch, capsys):
    """Before: on a full disk the sweep said "2 computed, 0 failed" with rc 0, the results in the rescue folder."""
    import errno
    import json

    from fedlib import cache

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FEDLIB_RESCUE", str(tmp_path / "rescue"))
    real = cache.write_atomic

    def full_disk(target, obj):
        if str(target).startswith(str(tmp_path / "results")):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, obj)

    monkeypatch.setattr(cache, "write_atomic", full_disk)
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(_TINY_GRID))
    assert main(["sweep", "--grid", str(grid), "--backend", "local"]) == 1
    said = capsys.readouterr()
    assert "2 computed but not cached" in said.out and said.err.count("NOT CACHED") == 2
    assert str(tmp_path / "rescue" / "fedlib-rescued" / "fedavg") in said.err


@pytest.mark.parametrize("text, said", [("{\n  \"base\": {,}\n}", "grid.json is not JSON: Expecting"),
                                        (None, "combinations (1000 x 200), more than 100,000")])
def test_a_grid_file_that_cannot_be_a_sweep_is_named_before_any_run(tmp_path, monkeypatch, capsys, text, said):
    import json

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    grid = tmp_path / "grid.json"
    grid.write_text(text if text is not None else json.dumps(
        {"base": {"method": "fedavg"}, "grid": {"seed": list(range(1000)), "lr": [i / 1000 for i in range(1, 201)]}}))
    assert main(["sweep", "--grid", str(grid)]) == 1
    assert said in capsys.readouterr().err and not (tmp_path / "results").exists()


@pytest.mark.parametrize("python", ["/bin/true", "/nonexistent/python", "/etc/hostname"])
def test_a_fedlib_python_that_is_not_a_python_is_named_before_anything_is_installed(python):
    """Before: FEDLIB_PYTHON=/bin/true went on to `$PY -m pip install` and failed with what pip's absence said."""
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(["bash", "-c", f"source '{root}/scripts/env.sh'"], capture_output=True, text=True,
                          env={**os.environ, "FEDLIB_PYTHON": python}, timeout=60)
    assert done.returncode == 2 and f"FEDLIB_PYTHON={python} is not a Python 3.10 or newer" in done.stderr
    assert "installing" not in done.stdout


def test_the_first_help_example_learns():
    """Before, the first example of `fedlib --help` ran local DP at epsilon 2 (where the paper says local DP needs
    epsilon >= 5): its accuracy fell from 59.5% to 13.2%. The first example now learns: its last round at least 20
    points above its first, as the help says."""
    import shlex

    from fedlib import __main__ as cli
    from fedlib.experiments import run

    first = next(line.strip() for line in cli.__doc__.splitlines() if line.strip().startswith("python -m fedlib run"))
    args = cli.build_parser("run").parse_args(shlex.split(first)[3:])
    acc = run(cli.run_config(args), progress=False)["rounds"]["acc_mean"]
    assert acc[-1] - acc[0] >= 0.20, acc
    assert "about 20% mean client accuracy after round 1, about 87% after round 10" in cli.__doc__


def test_the_parsers_and_list_import_no_torch_and_a_mistyped_flag_or_command_gets_the_nearest():
    """Before, `run --help` took 7.7 s, `list` 6.5 s and a mistyped flag 11 s (each imported torch and every method
    to build its parser), and a mistyped flag or subcommand got no suggestion. The parsers and `list` now read
    fedlib/cli_spec.json."""
    import subprocess
    import sys

    code = ("import sys, contextlib, io\nfrom fedlib import __main__ as m\nm.build_parser('run'); m.build_parser(None)\n"
            "with contextlib.redirect_stdout(io.StringIO()): m.list_everything()\n"
            "print(sorted(k for k in sys.modules if k == 'torch' or k.startswith('torch.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
    for argv, near in ((["run", "--rouns", "3"], "did you mean --rounds?"),
                       (["sweeep"], "did you mean 'sweep'?")):
        said = subprocess.run([sys.executable, "-m", "fedlib", *argv], capture_output=True, text=True, timeout=60)
        assert said.returncode == 2 and near in said.stderr, said.stderr


def test_the_command_lines_spec_is_what_the_code_says(tmp_path):
    """fedlib/cli_spec.json is written from the code (`python -m fedlib.cli_spec`): a Config field, a method or a
    dataset added without writing it again fails here; and its rule for a dataset's files agrees with fedlib.data's and
    fedlib.leaf's, here and in an empty data folder."""
    from fedlib import cli_spec, config, data, leaf, paths

    assert cli_spec.load() == json.loads(cli_spec.text(cli_spec.build())), "run `python -m fedlib.cli_spec`"
    spec = cli_spec.load()
    for root in (paths.data_dir(), tmp_path):
        for name in config.DATASETS:
            real = leaf.files_present(name, root) if name in leaf.LEAF_DATASETS else data.files_present(name, root)
            assert cli_spec.files_present(spec, name, root) == real, (name, root)


def test_messages_that_say_what_to_do_before_any_work(tmp_path, capsys):
    """Before: `check --rounds 1000000` printed nothing for 45 s; `sweep --out` to a folder failed only after every
    run; a run that waited for another job's computation said "computed and cached"."""
    from types import SimpleNamespace

    from fedlib import __main__ as cli
    from fedlib.result import Result

    assert main(["check", "--rounds", "1000000"]) == 2 and "at most 50" in capsys.readouterr().err
    (tmp_path / "grid.json").write_text(json.dumps({"base": {"method": "fedavg"}, "grid": {"seed": [0]}}))
    assert main(["sweep", "--grid", str(tmp_path / "grid.json"), "--out", str(tmp_path)]) == 1
    assert "a folder; give a file name in it" in capsys.readouterr().err
    waited = Result({"rounds": {}})
    waited.saved_to, waited.waited = tmp_path / "x.json", True
    cfg = SimpleNamespace(device="cpu")
    assert cli.where_it_came_from(cfg, waited, cached=False).startswith("computed by another job; read from the cache")


def test_a_chosen_python_without_fedlib_is_refused_not_installed_into(tmp_path):
    """Before, FEDLIB_PYTHON set to a system Python with no fedlib ran pip against that Python's prefix."""
    import shutil

    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is None or subprocess.run([system, "-c", "import torch"], capture_output=True, cwd=tmp_path).returncode == 0:
        pytest.skip("no Python without fedlib here")
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    done = subprocess.run(["bash", "-c", f"source '{root}/scripts/env.sh'"], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "FEDLIB_PYTHON": system}, timeout=120)
    assert done.returncode == 2 and "nothing was installed into it" in done.stderr and "python3 -m venv" in done.stderr
    assert "installing" not in done.stdout


def test_a_full_disk_under_fedlib_claims_names_the_file(monkeypatch, capsys):
    """Before, a full disk under `fedlib claims` ended in a traceback naming neither the file nor the disk."""
    import errno

    from fedlib import claims

    def full(rows, sets=None):
        raise OSError(errno.ENOSPC, "No space left on device", "figures/claims.md")

    monkeypatch.setattr(claims, "write_collected", full)
    monkeypatch.setattr(claims, "collect", lambda **kw: [])
    assert main(["claims"]) == 1
    said = capsys.readouterr().err
    assert "could not write figures/claims.md (the disk is full; free some space)" in said


def test_a_grid_with_a_number_too_long_to_read_names_the_grid(tmp_path, capsys):
    """Before, a grid holding a 5000-digit integer failed with Python's digit-limit error, naming no file."""
    grid = tmp_path / "grid.json"
    grid.write_text('{"base": {"seed": ' + "9" * 5000 + "}}")
    assert main(["sweep", "--grid", str(grid)]) == 1
    assert f"{grid} cannot be read as a grid" in capsys.readouterr().err


def test_a_moved_checkouts_venv_is_pointed_at_its_own_folder(tmp_path):
    """Before, a moved or copied checkout's .venv/bin/activate still named the old environment."""
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    venv = tmp_path / "new" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "activate").write_text('VIRTUAL_ENV="/old/place/.venv"\nexport VIRTUAL_ENV\n')
    (venv / "bin" / "pip").write_text("#!/old/place/.venv/bin/python\nimport pip\n")
    (venv / "bin" / "python").symlink_to(sys.executable)
    done = subprocess.run(["bash", "-c", f"source '{root}/scripts/venv_moved.sh' && repair_venv '{venv}'"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "was made at /old/place/.venv" in done.stdout
    assert (venv / "bin" / "activate").read_text().startswith(f'VIRTUAL_ENV="{venv}"')
    assert (venv / "bin" / "pip").read_text().startswith(f"#!{venv}/bin/python")
    again = subprocess.run(["bash", "-c", f"source '{root}/scripts/venv_moved.sh' && repair_venv '{venv}'"],
                           capture_output=True, text=True, timeout=60)
    assert again.stdout == ""  # in place: nothing to do
