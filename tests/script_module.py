"""The scripts under scripts/ as modules, for the tests that call their functions (scripts/ is not a package)."""
import importlib.util
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def load(name: str):
    """scripts/<name>.py, executed afresh as a module of that name (a test may patch its globals)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
