"""The progress bar fedlib shows: tqdm's notebook widget where ipywidgets is installed (JupyterLab with the `lab`
extra), its text bar elsewhere (tqdm.auto alone warns "IProgress not found" in every notebook run without the
widgets). `FEDLIB_PROGRESS=0` turns the bars off: `fedlib.notebook_run` sets it for the notebooks it executes
headlessly, whose saved outputs (the book) would otherwise hold every update of every bar as a line of text."""
import os

try:
    import ipywidgets  # noqa: F401
    from tqdm.auto import tqdm as _tqdm
except ImportError:
    from tqdm.std import tqdm as _tqdm


def tqdm(*args, **kwargs):
    if os.environ.get("FEDLIB_PROGRESS", "1") == "0":
        kwargs["disable"] = True
    return _tqdm(*args, **kwargs)


__all__ = ["tqdm"]
