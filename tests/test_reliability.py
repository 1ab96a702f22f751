"""What goes wrong on real machines: smoke output over committed figures, damaged caches and data files, results
folders that cannot be written, notebook pairs edited on both sides."""
import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fedlib import cache, data, outputs, paths, sweep
from fedlib import experiments as ex
from fedlib.papers import fedlog

ROOT = Path(__file__).resolve().parent.parent


def _tiny(**kw):
    return fedlog.paper_config("mnist", "fedavg", **{**dict(n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1),
                                                    **kw})


# ----------------------------------------------------------------------------- profiles

@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A fake checkout: paths resolve under tmp_path, no FEDLIB_* folders set, no profile chosen yet."""
    monkeypatch.setattr(paths, "project_root", lambda: tmp_path)
    for env in ("FEDLIB_FIGURES", "FEDLIB_RESULTS", "FEDLIB_PROFILE", paths.COMMITTED):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(paths, "_active", None)
    return tmp_path


@pytest.mark.parametrize("how", ["papermill", "env", "env pointing at figures/"])
def test_smoke_output_never_lands_in_figures(checkout, monkeypatch, how):
    if how == "papermill":
        paths.use_profile("smoke")
    else:
        monkeypatch.setenv("FEDLIB_PROFILE", "smoke")
        if how.endswith("figures/"):
            monkeypatch.setenv("FEDLIB_FIGURES", str(checkout / "figures"))
    written = outputs.save_table([{"method": "FedLog", "accuracy": 0.9}], "fig1_accuracy").attrs["paths"]
    assert all(p.parent == checkout / "build" / "smoke" / "figures" for p in written)
    assert not (checkout / "figures").exists()
    assert paths.results_dir() == checkout / "build" / "smoke" / "results"
    assert "profile" in written[0].read_text().splitlines()[0] and ",smoke" in written[0].read_text()


def test_quick_writes_figures_and_tables_say_their_profile(checkout):
    paths.use_profile("quick")
    written = outputs.save_table([{"method": "FedLog"}], "t").attrs["paths"]
    assert written[0] == checkout / "build" / "quick" / "figures" / "t.csv"
    assert written[0].read_text().splitlines()[1] == "FedLog,quick"


def test_paper_files_are_marked_and_the_quick_profile_never_writes_them(checkout, monkeypatch):
    monkeypatch.setenv(paths.COMMITTED, "1")  # even when it writes the committed figures/ (./run_all.sh --commit)
    paths.use_profile("paper")
    paper_file = outputs.save_table([{"method": "FedLog", "accuracy": 0.98}], "table1_mnist").attrs["paths"][0]
    assert paper_file == checkout / "figures" / "table1_mnist_paper.csv"
    before = paper_file.read_bytes()
    paths.use_profile("quick")
    quick_file = outputs.save_table([{"method": "FedLog", "accuracy": 0.90}], "table1_mnist").attrs["paths"][0]
    assert quick_file == checkout / "figures" / "table1_mnist.csv" and paper_file.read_bytes() == before
    with pytest.raises(ValueError, match="belong to the paper profile"):
        outputs.save_table([{"method": "FedLog"}], "table1_mnist_paper")
    assert paper_file.read_bytes() == before


def test_notebooks_write_figures_and_tables_only_through_fedlib():
    """So the profile decides every output name: no notebook saves a file itself."""
    for nb in sorted((ROOT / "notebooks").glob("*.py")):
        text = nb.read_text()
        for forbidden in (".savefig(", ".to_csv(", "write_text(", "open("):
            assert forbidden not in text, f"{nb.name} writes a file itself ({forbidden}); use plots.save_*"


def test_a_notebooks_parameters_cell_holds_the_profile_and_nothing_else():
    """Settings and knobs live in fedlib.papers: a notebook's parameters cell chooses the profile, no more."""
    import ast
    import re

    for nb in sorted((ROOT / "notebooks").glob("[0-9]*.py")):
        text = nb.read_text()
        cell = re.search(r'# %% tags=\["parameters"\]\n(.*?)(?=\n# %%)', text, re.S)
        assert cell, f"{nb.name} has no parameters cell"
        assigned = {t.id for node in ast.parse(cell.group(1)).body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)}
        assert assigned == {"profile"}, f"{nb.name}'s parameters cell sets {sorted(assigned)}"
        assert not re.search(r"^\s*[A-Z_]*(SETTINGS|PROFILES) = \{", text, re.M), \
            f"{nb.name} defines its own profile table; it belongs in fedlib.papers"


def test_notebooks_read_results_through_the_result_type():
    """No notebook indexes a result's inner layout: `Result` names what it reads (fedlib/result.py)."""
    for nb in sorted((ROOT / "notebooks").glob("[0-9]*.py")):
        text = nb.read_text()
        for layout in ('["rounds"]["', '["extra"]', '["final"]', '["client_kind"]', '["config"]["'):
            assert layout not in text, f"{nb.name} reads {layout} itself; use the Result's accessors"


def test_notebooks_are_thin_and_define_no_helper_twice():
    """Notebooks call fedlib and draw: at most about 170 code lines each (comments and blank lines aside), and no
    function or lambda defined under the same name in two of them (the same name meant different things before)."""
    import re
    from collections import Counter

    defined = Counter()
    for nb in sorted((ROOT / "notebooks").glob("[0-9]*.py")):
        lines = nb.read_text().splitlines()
        code = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
        assert len(code) <= 180, f"{nb.name} has {len(code)} code lines; move what is not drawing into fedlib"
        matches = [re.match(r"def (\w+)|(\w+) = lambda", line) for line in lines]
        defined.update({m.group(1) or m.group(2) for m in matches if m})
    assert not [name for name, n in defined.items() if n > 1], defined


def test_a_misspelt_profile_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="profile must be one of smoke, quick, paper, got 'smok'"):
        paths.use_profile("smok")
    res = subprocess.run(["bash", str(ROOT / "run_all.sh"), "01"], env={**os.environ, "FEDLIB_PROFILE": "Smoke",
                                                                         "FEDLIB_PYTHON": sys.executable},
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2 and "must be smoke, quick or paper" in res.stderr


# ----------------------------------------------------------------------------- damaged results

@pytest.mark.parametrize("damage", ["truncate", "empty", "wrong content"])
def test_a_damaged_result_is_named_set_aside_and_recomputed(damage, capsys):
    cfg = _tiny()
    first = ex.run(cfg, progress=False)
    path = cache.path(cfg)
    text = path.read_text()
    path.write_text({"truncate": text[:500], "empty": "", "wrong content": '{"config": {}}'}[damage])
    again = ex.run(cfg, progress=False)
    assert again["rounds"]["acc_mean"] == first["rounds"]["acc_mean"]
    assert str(path) in capsys.readouterr().err
    assert path.with_name(path.name + ".damaged").exists() and json.loads(path.read_text())["rounds"]


def test_a_damaged_result_does_not_stop_a_sweep(capsys):
    cfgs = [_tiny(seed=s) for s in range(2)]
    sweep.run_many(cfgs, progress=False)
    cache.path(cfgs[0]).write_text("{")
    report = sweep.run_sweep(cfgs, progress=False)
    assert (report.cached, report.computed, len(report.failures)) == (1, 1, 0)


def test_cache_files_are_group_readable_and_stale_temporaries_go():
    cfg = _tiny()
    folder = cache.path(cfg).parent
    folder.mkdir(parents=True)
    stale, fresh = folder / ".tmp-killed.json", folder / ".tmp-writing.json"
    stale.write_text("{")
    fresh.write_text("{")
    old = time.time() - 2 * cache.STALE_SECONDS
    os.utime(stale, (old, old))
    ex.run(cfg, progress=False)
    assert stat.S_IMODE(cache.path(cfg).stat().st_mode) & stat.S_IRGRP
    assert not stale.exists() and fresh.exists()


def test_an_unwritable_results_folder_fails_before_the_run(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("FEDLIB_RESULTS", str(blocker))
    monkeypatch.setattr(data, "load_dataset", lambda *a, **k: pytest.fail("the run started"))
    with pytest.raises(ValueError, match="cannot be written.*FEDLIB_RESULTS"):
        ex.run(_tiny(), progress=False)


# ----------------------------------------------------------------------------- damaged data

@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """FEDLIB_DATA with copies of the real MNIST files; no torchvision download is tried."""
    real = data.data_dir()
    for name in ("mnist.npz", "mnist.pkl.gz"):
        shutil.copy(real / name, tmp_path / name)
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    monkeypatch.setattr(data, "_torchvision_download", lambda *a: None)
    data._load_cached.cache_clear()
    yield tmp_path
    data._load_cached.cache_clear()


def _damage_npz(path: Path, how: str) -> None:
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:1000])
    elif how == "bytes flipped":
        raw = bytearray(path.read_bytes())
        raw[5000:5100] = bytes(100)
        path.write_bytes(bytes(raw))
    else:  # a valid file with other labels
        with np.load(path) as z:
            arrays = {k: z[k].copy() for k in z.files}
        arrays["y_train"][:100] = 3
        np.savez(path, **arrays)


@pytest.mark.parametrize("how", ["truncated", "bytes flipped", "labels altered"])
def test_a_damaged_or_altered_data_file_is_rebuilt_from_its_source(data_copy, how, capsys):
    _damage_npz(data_copy / "mnist.npz", how)
    ds = data.load_dataset("mnist")
    assert np.bincount(ds.train_y.numpy(), minlength=10).tolist() == data.EXPECTED["mnist"]["train_counts"]
    assert "mnist.npz" in capsys.readouterr().err and (data_copy / "mnist.npz.damaged").exists()


def test_a_truncated_source_is_named_and_fetched_again(data_copy, monkeypatch, capsys):
    (data_copy / "mnist.npz").unlink()
    pkl = data_copy / "mnist.pkl.gz"
    good = pkl.read_bytes()
    pkl.write_bytes(good[:5000])
    fetched = []
    monkeypatch.setattr(data, "_fetch_mnist_pickle", lambda p: fetched.append(p) or p.write_bytes(good) or True)
    ds = data.load_dataset("mnist")
    assert len(ds.train_y) == 60000 and fetched == [pkl] and "mnist.pkl.gz" in capsys.readouterr().err
    with gzip.open(data_copy / "mnist.pkl.gz.damaged") as f:
        with pytest.raises(EOFError):
            f.read()


# ----------------------------------------------------------------------------- notebook pairs

def _git(folder, *args):
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def _committed_pair(tmp_path):
    """A git checkout holding one notebook pair, committed; returns its notebooks folder."""
    import jupytext

    nb = tmp_path / "notebooks"
    nb.mkdir()
    (nb / "01_x.py").write_text("# %% [markdown]\n# title\n\n# %%\nx = 1\n")
    jupytext.write(jupytext.read(nb / "01_x.py"), nb / "01_x.ipynb")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pair")
    return nb


def test_a_pair_edited_on_both_sides_is_refused(tmp_path):
    import jupytext

    nb = _committed_pair(tmp_path)
    check = lambda: subprocess.run([sys.executable, str(ROOT / "scripts" / "check_notebook_pairs.py"), str(nb)],  # noqa
                                   capture_output=True, text=True)
    edited = jupytext.read(nb / "01_x.ipynb")
    edited.cells[1].source = "x = 2  # edited in JupyterLab"
    jupytext.write(edited, nb / "01_x.ipynb")
    assert check().returncode == 0  # one side edited: the sync keeps that edit
    time.sleep(0.01)
    (nb / "01_x.py").write_text("# %% [markdown]\n# title\n\n# %%\nx = 3  # edited after a pull\n")
    res = check()
    assert res.returncode == 1 and "01_x.py is newer" in res.stderr and "overwrite 01_x.ipynb" in res.stderr


def test_outputs_kept_in_the_committed_notebook_are_not_an_edit_of_the_pair(tmp_path):
    """run_all.sh writes a run's outputs into the committed .ipynb; editing the .py afterwards must still sync (before,
    the .ipynb counted as edited and the pair was refused)."""
    import nbformat

    nb = _committed_pair(tmp_path)
    ran = nbformat.read(nb / "01_x.ipynb", as_version=4)
    ran.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nbformat.write(ran, nb / "01_x.ipynb")
    time.sleep(0.01)
    (nb / "01_x.py").write_text("# %% [markdown]\n# title\n\n# %%\nx = 3  # edited after a run\n")
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_notebook_pairs.py"), str(nb)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_a_runs_outputs_are_kept_without_what_changes_from_run_to_run(tmp_path):
    """The committed notebook gets the outputs, not papermill's parameters cell, timings, stderr or a full-size image;
    the same run gives the same bytes; a .py edited during the run is not overwritten by stale inputs."""
    import base64
    import io

    import jupytext
    import nbformat
    from PIL import Image

    from fedlib import notebook_run

    py = tmp_path / "01_x.py"
    py.write_text('# %% tags=["parameters"]\nprofile = "quick"\n\n# %%\nprint(1)\n')
    notebook = tmp_path / "01_x.ipynb"
    jupytext.write(jupytext.read(py), notebook)
    ran = nbformat.read(notebook, as_version=4)
    injected = nbformat.v4.new_code_cell('profile = "quick"', metadata={"tags": ["injected-parameters"]})
    ran.cells.insert(1, injected)
    ran.metadata["papermill"] = {"duration": 1.5, "parameters": {"profile": "quick"}}
    picture = io.BytesIO()
    Image.new("RGB", (2000, 1000), "white").save(picture, "PNG")
    ran.cells[2].metadata.update({"execution": {"iopub.execute_input": "2026-11-25T09:00:00"}, "papermill": {}})
    ran.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n"),
                            nbformat.v4.new_output("stream", name="stderr", text="warning: 3.2 s\n"),
                            nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(
                                picture.getvalue()).decode(), "text/plain": "<Figure>"})]
    executed = tmp_path / "ran.ipynb"
    nbformat.write(ran, executed)
    assert "outputs kept" in notebook_run.keep_outputs(executed, notebook)
    kept = nbformat.read(notebook, as_version=4)
    assert len(kept.cells) == 2 and "papermill" not in kept.metadata and kept.cells[1].metadata == {}
    assert kept.metadata["fedlib"] == {"profile": "quick"}
    assert [o.get("name", o.output_type) for o in kept.cells[1].outputs] == ["stdout", "display_data"]
    shown = Image.open(io.BytesIO(base64.b64decode(kept.cells[1].outputs[1].data["image/png"])))
    assert shown.size == (960, 480)
    first = notebook.read_bytes()
    notebook_run.keep_outputs(executed, notebook)
    assert notebook.read_bytes() == first and py.stat().st_mtime >= notebook.stat().st_mtime
    py.write_text('# %% tags=["parameters"]\nprofile = "quick"\n\n# %%\nprint(2)\n')
    assert "not updated" in notebook_run.keep_outputs(executed, notebook) and notebook.read_bytes() == first


def test_a_quick_run_never_replaces_a_notebooks_paper_profile_outputs(tmp_path):
    """Every committed notebook shows its paper profile's outputs; `./run_all.sh --commit 01` (the quick profile)
    replaced notebook 01's with the quick run's. It now leaves them, saying so; a paper run replaces them."""
    import jupytext
    import nbformat

    from fedlib import notebook_run

    py = tmp_path / "01_x.py"
    py.write_text('# %% tags=["parameters"]\nprofile = "lab"\n\n# %%\nprint(1)\n')
    notebook = tmp_path / "01_x.ipynb"

    def ran(profile, printed):
        nb = jupytext.read(py)
        nb.metadata["papermill"] = {"parameters": {"profile": profile}}
        nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
        nbformat.write(nb, tmp_path / f"{profile}.ipynb")
        return tmp_path / f"{profile}.ipynb"

    jupytext.write(jupytext.read(py), notebook)
    assert "outputs kept" in notebook_run.keep_outputs(ran("paper", "paper\n"), notebook)
    paper = notebook.read_bytes()
    said = notebook_run.keep_outputs(ran("quick", "quick\n"), notebook)
    assert "not updated" in said and "paper profile's outputs" in said and notebook.read_bytes() == paper
    assert "outputs kept" in notebook_run.keep_outputs(ran("paper", "again\n"), notebook)
    assert "again" in notebook.read_text()


def test_the_quick_profile_writes_under_build_and_only_a_commit_or_the_paper_profile_writes_figures(checkout,
                                                                                                     monkeypatch):
    """Issue 69, section 3: the README's first command (the quick profile) rewrote the committed figures/ and
    notebooks, so on another processor kind 28 tracked files changed. The quick profile now writes build/quick/;
    FEDLIB_WRITE_COMMITTED=1 (./run_all.sh --commit) and the paper profile write figures/."""
    assert paths.use_profile("quick") == "quick" and paths.figures_dir() == checkout / "build" / "quick" / "figures"
    assert paths.results_dir() == checkout / "results" and paths.committed_figures_dir() == checkout / "figures"
    monkeypatch.setenv(paths.COMMITTED, "1")
    assert paths.figures_dir() == checkout / "figures"
    monkeypatch.delenv(paths.COMMITTED)
    assert paths.use_profile("paper") == "paper" and paths.figures_dir() == checkout / "figures"
    monkeypatch.setenv("FEDLIB_FIGURES", str(checkout / "mine"))  # a folder named is used by every profile
    assert paths.use_profile("quick") == "quick" and paths.figures_dir() == checkout / "mine"
    script = (ROOT / "run_all.sh").read_text()
    keep = script[:script.index("--keep-outputs")].rsplit("\n", 2)[-2]  # the condition on the line before
    assert keep.strip() == 'if [ "$PROFILE" = paper ] || { [ "$PROFILE" = quick ] && [ "$COMMIT" = 1 ]; }; then'


@pytest.mark.slow
def test_the_readmes_first_command_changes_no_tracked_file():
    """`./run_all.sh 01` (the quick profile, as the README's first command runs it) leaves every tracked file's bytes
    as they were, and its figures and claims page are under build/quick/figures/."""
    import hashlib

    def tracked():
        names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return {n: hashlib.sha256((ROOT / n).read_bytes()).hexdigest() for n in names.decode().split("\0")
                if n and (ROOT / n).is_file()}

    before = tracked()
    env = {k: v for k, v in os.environ.items() if k not in ("FEDLIB_FIGURES", paths.COMMITTED)}
    res = subprocess.run(["bash", str(ROOT / "run_all.sh"), "01"], cwd=ROOT, capture_output=True, text=True,
                         env={**env, "FEDLIB_PROFILE": "quick", "FEDLIB_PYTHON": sys.executable}, timeout=1200)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    after = tracked()
    assert [n for n in before if before[n] != after.get(n)] == []
    quick = ROOT / "build" / "quick" / "figures"
    assert (quick / "claims" / "01_synthetic_separators_quick.csv").exists() and (quick / "claims.md").exists()
    assert "figures and tables are in build/quick/figures/" in res.stdout


def test_a_notebook_run_by_hand_keeps_the_committed_figures(checkout):
    """JupyterLab with no FEDLIB_PROFILE: the parameters cell's default is 'lab', which runs quick's settings and
    writes its figures under build/lab/ (before: the quick profile, over the committed figures/)."""
    assert paths.use_profile(paths.LAB) == "quick"
    written = outputs.save_table([{"method": "FedLog"}], "t").attrs["paths"]
    assert written[0] == checkout / "build" / "lab" / "figures" / "t.csv" and not (checkout / "figures").exists()
    assert paths.results_dir() == checkout / "results"  # runs are shared with every other profile
    for nb in sorted((ROOT / "notebooks").glob("[0-9]*.py")):
        text = nb.read_text()
        assert 'os.environ.get("FEDLIB_PROFILE", "lab")' in text and "profile = paths.use_profile(profile)" in text


@pytest.mark.slow
def test_two_run_all_at_once_both_finish_and_leave_one_book(tmp_path):
    """Issue 68: two ./run_all.sh at once shared the kernels' IPC sockets (kernel-ipc-N in notebooks/), the executed
    copy and the book's build folder. Both now run to the end, each with its own files, and one whole book is left."""
    env = {**os.environ, "FEDLIB_PROFILE": "smoke", "FEDLIB_PYTHON": sys.executable}
    start = time.time()
    runs = [subprocess.Popen(["bash", str(ROOT / "run_all.sh"), "01", "--book"], env=env, cwd=ROOT,
                             stdout=open(tmp_path / f"{i}.log", "w"), stderr=subprocess.STDOUT) for i in range(2)]
    codes = [run.wait(timeout=900) for run in runs]
    logs = [(tmp_path / f"{i}.log").read_text() for i in range(2)]
    assert codes == [0, 0], logs
    assert (ROOT / "build" / "book" / "index.html").exists()
    assert not [p for p in (ROOT / "notebooks").glob("kernel-ipc-*") if p.lstat().st_mtime >= start]
    assert not list((ROOT / "build" / "notebooks").glob(".*"))
    assert not list((ROOT / "build").glob(".book*"))  # each build's own folders were renamed in or removed


def test_kept_outputs_do_not_depend_on_how_the_kernel_cut_its_stdout():
    """A paper redraw of notebook 02 kept one cell's two lines as one stdout output on one run and as two on the
    next (the kernel sends what is printed within some milliseconds as one message), so the committed notebook's
    bytes changed with no output changed. Consecutive stdout outputs are kept as one."""
    import nbformat

    from fedlib import notebook_run

    cut = [nbformat.v4.new_output("stream", name="stdout", text="a\n"),
           nbformat.v4.new_output("stream", name="stdout", text="b\n"),
           nbformat.v4.new_output("display_data", data={"text/plain": "t"}),
           nbformat.v4.new_output("stream", name="stdout", text="c\n")]
    whole = notebook_run.merged_streams(cut)
    assert [(o.output_type, o.get("text")) for o in whole] == [("stream", "a\nb\n"), ("display_data", None),
                                                               ("stream", "c\n")]
