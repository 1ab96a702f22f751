"""Execute one notebook headlessly, as `run_all.sh` and the freshness check do:

    python -m fedlib.notebook_run notebooks/02_communication_cost.ipynb build/notebooks/02_communication_cost.ipynb quick

papermill with the notebook's `profile` parameter, run in notebooks/, its kernel talking over IPC sockets (local files
in Jupyter's runtime folder) instead of unencrypted TCP: the kernel then has no reason to warn about eavesdropping,
and nothing listens on a port; progress bars are off in its kernel (FEDLIB_PROGRESS=0), so the saved outputs
hold results, not every update of a bar. Ctrl-C stops it with one line, not a ZMQ traceback, and exit status 130; run_all.sh's
`.incomplete` marker then stays beside the executed notebook, so the book shows it as interrupted.
"""
from __future__ import annotations

import sys
from pathlib import Path

from jupyter_client.manager import KernelManager
from traitlets import CaselessStrEnum


class IPCKernelManager(KernelManager):
    """A kernel manager whose kernels use IPC transport (jupyter_client's own option, by configuration)."""
    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)


def execute(notebook: Path, out: Path, profile: str, cwd: Path | None = None) -> None:
    import os

    import papermill

    os.environ.setdefault("FEDLIB_PROGRESS", "0")  # the kernel inherits it: no progress bars in the saved outputs

    papermill.execute_notebook(str(notebook), str(out), parameters={"profile": profile}, kernel_name="python3",
                               language="python",
                               cwd=str(cwd or Path(notebook).resolve().parent),
                               kernel_manager_class=f"{__name__}.IPCKernelManager")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m fedlib.notebook_run NOTEBOOK OUT PROFILE", file=sys.stderr)
        return 2
    notebook, out, profile = Path(args[0]), Path(args[1]), args[2]
    if not notebook.is_file():
        print(f"{notebook}: no such notebook", file=sys.stderr)
        return 2
    try:
        execute(notebook, out, profile)
    except KeyboardInterrupt:
        print(f"\n{notebook.name}: interrupted before its end; {out} is not a complete run", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001  (papermill names the failing cell; say it in one line and stop)
        where = f"\n  the executed notebook, with the traceback in its cell, is {out}" if out.exists() else ""
        print(f"{notebook.name} failed: {type(err).__name__}: {str(err).strip().splitlines()[-1] if str(err) else ''}"
              f"{where}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
