"""The progress bar fedlib shows: tqdm's notebook widget where ipywidgets is installed (JupyterLab with the `lab`
extra), its text bar elsewhere. tqdm.auto alone warns "IProgress not found" in every notebook run headlessly without
the widgets (run_all.sh, the book); this chooses the text bar there instead."""
try:
    import ipywidgets  # noqa: F401
    from tqdm.auto import tqdm
except ImportError:
    from tqdm.std import tqdm

__all__ = ["tqdm"]
