"""The progress bar fedlib shows: tqdm's notebook widget where ipywidgets is installed (JupyterLab with the `lab`
extra), its text bar elsewhere (tqdm.auto alone warns "IProgress not found" in every notebook run without the
widgets). `FEDLIB_PROGRESS=0` turns the bars off. `FEDLIB_PROGRESS=terminal`, which `fedlib.notebook_run` sets
for the notebooks it executes headlessly (run_all.sh), writes them to the process's own standard error: a kernel's
is the terminal that started it, so a notebook's sweep shows its progress there, and the saved outputs (the book),
which would otherwise hold every update of every bar as a line of text, hold none."""
import os
import sys

try:
    import ipywidgets  # noqa: F401
    from tqdm.auto import tqdm as _tqdm
except ImportError:
    from tqdm.std import tqdm as _tqdm


def tqdm(*args, **kwargs):
    mode = os.environ.get("FEDLIB_PROGRESS", "1")
    if mode == "0":
        kwargs["disable"] = True
    elif mode == "terminal":
        from tqdm.std import tqdm as text_bar  # no widget: there is no notebook to draw one in

        kwargs.setdefault("file", sys.__stderr__)
        return text_bar(*args, **kwargs)
    return _tqdm(*args, **kwargs)


__all__ = ["tqdm"]
