"""scripts/background_slot.sh: a queue's lines run in order from its worktree; further WORKTREE QUEUE pairs run after
it (the slot passes to the next list); bad arguments stop it before anything runs."""
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "background_slot.sh"
JOB = "import os, sys; open(os.environ['LOG'], 'a').write(os.path.basename(os.getcwd()) + ' ' + sys.argv[1] + ' ' + " \
      "os.environ['PYTHONPATH'].split(os.sep)[-1] + ' ' + os.environ['OMP_NUM_THREADS'] + '\\n')\n"


def _worktree(root: Path, name: str) -> Path:
    wt = root / name
    (wt / "fedlib").mkdir(parents=True)
    (wt / "job.py").write_text(JOB)
    return wt


def _slot(tmp_path, *args):
    env = {"PATH": "/usr/bin:/bin", "FEDLIB_PYTHON": sys.executable, "LOG": str(tmp_path / "log.txt")}
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_slot_runs_each_queue_from_its_worktree_then_passes_to_the_next(tmp_path):
    _worktree(tmp_path, "wt1"), _worktree(tmp_path, "wt2")
    (tmp_path / "q1.txt").write_text("job.py a\n# a comment\n\njob.py 'b c'\n")
    (tmp_path / "q2.txt").write_text("job.py d\n")
    done = _slot(tmp_path, "wt1", "results", "q1.txt", "wt2", "q2.txt")  # relative paths, from the caller's folder
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "log.txt").read_text().splitlines() == ["wt1 a wt1 1", "wt1 b c wt1 1", "wt2 d wt2 1"]
    assert done.stdout.count("start:") == 3 and (tmp_path / "results").is_dir()


def test_the_slot_refuses_a_bad_pair_before_running_anything(tmp_path):
    _worktree(tmp_path, "wt1")
    (tmp_path / "q1.txt").write_text("job.py a\n")
    for args in (["wt1", "results", "q1.txt", "wt1"],  # an odd pair
                 ["wt1", "results", "q1.txt", "nowhere", "q1.txt"],  # no such worktree
                 ["wt1", "results", "q1.txt", "wt1", "missing.txt"]):  # no such queue
        done = _slot(tmp_path, *args)
        assert done.returncode == 2 and "usage: scripts/background_slot.sh" in done.stderr
    assert not (tmp_path / "log.txt").exists() and not (tmp_path / "results").exists()


def test_a_line_may_name_its_own_worktree_and_one_that_names_none_stops_the_slot_first(tmp_path):
    _worktree(tmp_path, "wt1"), _worktree(tmp_path, "wt2")
    (tmp_path / "q1.txt").write_text("job.py a\n@wt2 job.py 'b c'\njob.py d\n")
    done = _slot(tmp_path, "wt1", "results", "q1.txt")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "log.txt").read_text().splitlines() == ["wt1 a wt1 1", "wt2 b c wt2 1", "wt1 d wt1 1"]
    (tmp_path / "log.txt").unlink()
    for line, named in (("@nowhere job.py b", "'@nowhere' in"), ("@ job.py b", "'@' in")):  # an empty one too
        (tmp_path / "q1.txt").write_text(f"job.py a\n{line}\n")
        done = _slot(tmp_path, "wt1", "results2", "q1.txt")
        assert done.returncode == 2 and named in done.stderr and "names no worktree" in done.stderr
    assert not (tmp_path / "log.txt").exists()


def _fake_ldconfig(tmp_path) -> tuple[Path, str]:
    """A folder with an `ldconfig` that lists a harmless library (libm, which preloading changes nothing) as
    tcmalloc, and that library's path."""
    harmless = next(p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                "/lib/aarch64-linux-gnu/libm.so.6", "/usr/lib/aarch64-linux-gnu/libm.so.6", "/lib64/libm.so.6")
                    if Path(p).exists())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ldconfig").write_text(f"#!/bin/sh\necho '\tlibtcmalloc_minimal.so.4 (libc6,x86-64) => {harmless}'\n")
    (bin_dir / "ldconfig").chmod(0o755)
    return bin_dir, harmless


def test_the_slot_preloads_tcmalloc_where_installed_unless_ld_preload_is_set(tmp_path):
    _worktree(tmp_path, "wt1").joinpath("env.py").write_text(
        "import os; open(os.environ['LOG'], 'a').write(repr(os.environ.get('LD_PRELOAD')) + '\\n')\n")
    (tmp_path / "q1.txt").write_text("env.py\n")
    bin_dir, harmless = _fake_ldconfig(tmp_path)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FEDLIB_PYTHON": sys.executable, "LOG": str(tmp_path / "log.txt")}
    for extra in ({}, {"LD_PRELOAD": ""}):
        done = subprocess.run(["bash", str(SCRIPT), "wt1", "results", "q1.txt"], cwd=tmp_path, env={**env, **extra},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "log.txt").read_text().splitlines() == [repr(harmless), "''"]


def test_the_test_command_and_run_all_preload_tcmalloc_before_their_work(tmp_path):
    """scripts/tcmalloc.sh, which run_tests.sh and run_all.sh source (the tests ran 30.6 s on glibc's malloc against
    24.8 s preloaded, the engine's and algorithms' files on an Intel 6-167): LD_PRELOAD is exported to what runs
    after it where tcmalloc is installed, a set one (even empty) is kept, none is set where it is not installed or
    where no ldconfig is on PATH (under `set -euo pipefail`, as the scripts run, that once stopped them); and both
    entry points call it before pytest or the notebooks start."""
    bin_dir, harmless = _fake_ldconfig(tmp_path)
    show = f'set -euo pipefail; source {SCRIPT.parent / "tcmalloc.sh"}; preload_tcmalloc; echo "[$TCMALLOC]"; ' \
           f'{sys.executable} -c "import os; print(repr(os.environ.get(\'LD_PRELOAD\')))"'
    seen = []
    awk_only = tmp_path / "awk_only"  # a PATH with no ldconfig (a user's without /sbin): the scripts go on
    awk_only.mkdir()
    (awk_only / "awk").symlink_to(shutil.which("awk"))
    for path, extra in ((f"{bin_dir}:/usr/bin:/bin", {}), (f"{bin_dir}:/usr/bin:/bin", {"LD_PRELOAD": ""}),
                        (str(awk_only), {})):
        done = subprocess.run(["/bin/bash", "-c", show], env={"PATH": path, **extra}, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        seen.append(done.stdout.split())
    assert seen == [[f"[{harmless}]", repr(harmless)], ["[]", "''"], ["[]", "None"]]
    root = SCRIPT.parent.parent
    for entry, work in (("run_tests.sh", '"$PY" -m pytest'), ("run_all.sh", '"$PY" -m fedlib fetch-data')):
        text = (root / entry).read_text()
        assert "source" in text and "scripts/tcmalloc.sh" in text
        assert -1 < text.index("\npreload_tcmalloc\n") < text.index(work), entry
