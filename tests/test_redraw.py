"""A redraw of the paper profile from archive/ writes the bytes that are committed (issue 69, section 3): its figures,
tables, claims ledger and the notebook's kept outputs. CI runs it on a fresh clone, so a change that moves a committed
byte without a redraw, or a redraw that depends on the machine, fails here.

Notebooks 02 (FedLog's Table 1 and A.1) and 08 are checked: they compute nothing at the paper profile (every run
comes from archive/), and each redraw takes about a minute; notebooks 01 and 04 compute at the paper profile, and
the freshness check (`python -m fedlib check`) compares those by their numbers."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from fedlib import paths

ROOT = paths.project_root()


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["02_communication_cost", "08_fedprof_client_selection"])
def test_a_paper_redraw_changes_no_committed_byte(tmp_path, notebook):
    figures = tmp_path / "figures"
    env = {**os.environ, "FEDLIB_PROFILE": "paper", "FEDLIB_FIGURES": str(figures), "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "FEDLIB_RESULTS": str(tmp_path / "results")}
    executed = tmp_path / f"{notebook}.ipynb"
    run = subprocess.run([sys.executable, "-m", "fedlib.notebook_run", str(ROOT / "notebooks" / f"{notebook}.ipynb"),
                          str(executed), "paper"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    written = [f for f in figures.rglob("*")  # a lock beside a file (.provenance.json.lock) is ignored by git
               if f.is_file() and f.name != "provenance.json" and not f.name.startswith(".")]
    assert len(written) >= 5, written  # its figures, tables and claims ledger
    differ = [str(f.relative_to(figures)) for f in written
              if f.read_bytes() != (ROOT / "figures" / f.relative_to(figures)).read_bytes()]
    assert not differ, f"a paper redraw of {notebook} wrote other bytes than are committed: {differ}"
    made_by = json.loads((figures / "provenance.json").read_text())
    committed = json.loads((ROOT / "figures" / "provenance.json").read_text())
    assert {k: committed.get(k) for k in made_by} == made_by
    kept = tmp_path / "kept.ipynb"  # the outputs run_all.sh keeps in the committed notebook
    shutil.copy(ROOT / "notebooks" / f"{notebook}.ipynb", kept)
    subprocess.run([sys.executable, "-m", "fedlib.notebook_run", "--keep-outputs", str(executed), str(kept)],
                   env=env, cwd=ROOT, check=True, capture_output=True)
    assert kept.read_bytes() == (ROOT / "notebooks" / f"{notebook}.ipynb").read_bytes(), \
        f"the outputs of a paper redraw of {notebook} differ from the committed notebook's"
