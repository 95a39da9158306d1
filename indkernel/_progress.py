"""The progress bar: tqdm's notebook widget where ipywidgets is installed, else its text bar
(``tqdm.auto`` without ipywidgets warns "IProgress not found" in every notebook cell)."""

from importlib.util import find_spec

if find_spec("ipywidgets") is None:
    from tqdm.std import tqdm
else:
    from tqdm.auto import tqdm

__all__ = ["tqdm"]
