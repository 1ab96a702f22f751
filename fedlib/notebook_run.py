"""Execute one notebook headlessly, as `run_all.sh` and the freshness check do:

    python -m fedlib.notebook_run notebooks/02_communication_cost.ipynb build/notebooks/02_communication_cost.ipynb quick

papermill with the notebook's `profile` parameter, run in notebooks/, its kernel talking over IPC sockets (local files
in Jupyter's runtime folder) instead of unencrypted TCP: the kernel then has no reason to warn about eavesdropping,
and nothing listens on a port; progress bars go to the kernel's own standard error, the terminal, not into its
outputs (FEDLIB_PROGRESS=terminal), so the saved outputs hold results, not every update of a bar. Ctrl-C stops it
with one line, not a ZMQ traceback, and exit status 130 (the kernel's standard error reaches the terminal through
this process, which drops what the kernel writes after the Ctrl-C, while it is shut down); run_all.sh's `.incomplete` marker then stays beside the executed notebook, so the book shows it as interrupted. The kernel runs in
a session of its own, which a Ctrl-C at the terminal does not reach: it is passed on to the kernel, whose cell stops
then, rather than when it would have ended (papermill's shutdown waits for the cell's reply).
"""
from __future__ import annotations

import sys
from pathlib import Path

from jupyter_client.manager import KernelManager
from traitlets import CaselessStrEnum, default

from .safe_files import replacing


class IPCKernelManager(KernelManager):
    """A kernel manager whose kernels use IPC transport (jupyter_client's own option, by configuration); the managers
    made in this process are kept in `made`, so that a Ctrl-C can be passed on to their kernels."""
    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)
    made: list = []

    interrupted = False  # set by a Ctrl-C here: from then on the kernels' standard error is dropped

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        IPCKernelManager.made.append(self)
        self.relay = None

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        """The kernel's standard error through a pipe that a thread copies to ours (progress bars, a cell's own
        warnings) until a Ctrl-C: after it, what the kernel writes while papermill shuts it down (ipykernel's
        "ZMQError: Socket operation on non-socket" traceback, when its output thread closed first) is dropped,
        so that the interrupt stays one line."""
        import os
        import threading

        read_end, write_end = os.pipe()
        try:
            await super()._async_launch_kernel(kernel_cmd, **{**kw, "stderr": write_end})
        finally:
            os.close(write_end)  # the kernel holds its own copy: the pipe ends when the kernel does

        def copy() -> None:
            with os.fdopen(read_end, "rb", buffering=0) as pipe:
                while chunk := pipe.read(65536):
                    if not IPCKernelManager.interrupted:
                        os.write(2, chunk)  # where the kernel wrote before, when it inherited this descriptor

        self.relay = threading.Thread(target=copy, name="kernel-stderr", daemon=True)
        self.relay.start()

    @default("ip")
    def _ip_default(self) -> str:
        """The sockets' path prefix, unique to this kernel: jupyter_client's default ("kernel-ipc" in the working
        folder, notebooks/) made two runs at once share sockets (`ValueError: Invalid Signature`)."""
        import os
        import secrets
        import tempfile

        return os.path.join(tempfile.gettempdir(), f"fedlib-kernel-{os.getpid()}-{secrets.token_hex(4)}")


def _interrupt_kernels(signum, frame) -> None:
    """SIGINT here: the same to every kernel this process started (each leads a session of its own), then
    KeyboardInterrupt, as Python's own handler raises."""
    import os
    import signal

    IPCKernelManager.interrupted = True  # before the kernel hears of it: what it writes from now on is dropped
    for km in IPCKernelManager.made:
        pid = getattr(getattr(km, "provisioner", None), "pid", None)
        if pid:
            try:
                os.killpg(pid, signal.SIGINT)
            except (ProcessLookupError, PermissionError):
                pass  # that kernel is gone already
    raise KeyboardInterrupt


def execute(notebook: Path, out: Path, profile: str, cwd: Path | None = None) -> None:
    import os

    import papermill

    os.environ.setdefault("FEDLIB_PROGRESS", "terminal")  # the kernel inherits it: bars on the terminal, not in outputs
    import signal

    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.default_int_handler:  # an ignored SIGINT (a job started in the background) stays ignored
        signal.signal(signal.SIGINT, _interrupt_kernels)
    try:
        papermill.execute_notebook(str(notebook), str(out), parameters={"profile": profile}, kernel_name="python3",
                                   language="python",
                                   cwd=str(cwd or Path(notebook).resolve().parent),
                                   kernel_manager_class=f"{__name__}.IPCKernelManager")
    finally:
        if previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)
        for km in IPCKernelManager.made:  # the kernel has exited: its last lines reach the terminal before ours
            if km.relay is not None:
                km.relay.join(timeout=5)


VOLATILE_CELL = ("execution", "papermill")  # a cell's metadata that changes from run to run: timings, status


def small_png(encoded: str, width: int = 960) -> str:
    """A figure as the committed notebook shows it: at most `width` pixels wide, 256 colours (about a quarter of the
    bytes; the full figure is in figures/). The same figure gives the same bytes."""
    import base64
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(base64.b64decode(encoded))).convert("RGB")
    image.thumbnail((width, width), Image.LANCZOS)
    buffer = io.BytesIO()
    image.quantize(colors=256, method=Image.MEDIANCUT, dither=Image.NONE).save(buffer, "PNG", optimize=True)
    return base64.b64encode(buffer.getvalue()).decode() + "\n"


def merged_streams(outputs: list) -> list:
    """Consecutive stdout outputs as one, as a reader sees them: the kernel cuts its stdout into messages by timing
    (two prints 10 ms apart are one output or two), so the kept notebook's bytes would differ from run to run."""
    merged: list = []
    for out in outputs:
        if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1].text += out.text
        else:
            merged.append(out)
    return merged


def _shown_profile(notebook: Path) -> str | None:
    """The profile whose outputs the committed notebook shows (None: none, or not a notebook one can read)."""
    import nbformat

    try:
        return nbformat.read(notebook, as_version=4).metadata.get("fedlib", {}).get("profile")
    except (OSError, ValueError, nbformat.reader.NotJSONError):
        return None


def keep_outputs(executed: Path, notebook: Path) -> str:
    """Write the outputs of `executed` (papermill's copy of `notebook`, run to its end) into the committed
    `notebook`, so that a clone shows them without running anything (JupyterLab, the repository's web view). What
    changes from run to run is left out: papermill's injected parameters cell and metadata, cell timings, stderr
    (warnings, progress). Refused, saying why, when the executed inputs are not the notebook's .py as it is now (it
    was edited during the run), or when the notebook shows the paper profile's outputs and these are another
    profile's (a quick run never replaces them). The .py is touched last, so that jupytext keeps it as the pair's
    source."""
    import os

    import jupytext
    import nbformat

    ran = nbformat.read(executed, as_version=4)
    ran.cells = [c for c in ran.cells if "injected-parameters" not in c.get("metadata", {}).get("tags", [])]
    source = notebook.with_suffix(".py")
    sources = lambda nb: [(c.cell_type, c.source.strip()) for c in nb.cells]  # noqa: E731
    if source.exists() and sources(jupytext.read(source)) != sources(ran):
        return f"{notebook.name}: not updated, {source.name} changed while it ran (run it again to keep its outputs)"
    profile = ran.metadata.pop("papermill", {}).get("parameters", {}).get("profile")
    if profile != "paper" and _shown_profile(notebook) == "paper":
        return (f"{notebook.name}: not updated, it shows the paper profile's outputs (FEDLIB_PROFILE=paper ./run_all.sh "
                f"redraws them); this {profile or 'unnamed'} run's are in {executed}")
    if profile:
        ran.metadata["fedlib"] = {"profile": profile}  # which profile the outputs are of (the book says it)
    for cell in ran.cells:
        for key in VOLATILE_CELL:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = merged_streams([o for o in cell.outputs
                                           if not (o.output_type == "stream" and o.get("name") == "stderr")])
            for out in cell.outputs:
                if "image/png" in out.get("data", {}):
                    out.data["image/png"] = small_png(out.data["image/png"])
    with replacing(notebook, "w", encoding="utf-8") as f:  # its own temporary (two runs at once), never a symlink
        nbformat.write(ran, f)
    if source.exists():
        os.utime(source)
    return f"{notebook.name}: outputs kept ({notebook.stat().st_size / 1e3:.0f} kB)"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[0] == "--keep-outputs":  # python -m fedlib.notebook_run --keep-outputs EXECUTED NOTEBOOK
        print(keep_outputs(Path(args[1]), Path(args[2])))
        return 0
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
