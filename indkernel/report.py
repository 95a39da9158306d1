"""Numbers into the README: the benchmark scripts in ``figures/`` write their tables between
``<!-- name:start -->`` and ``<!-- name:end -->`` markers, so the README quotes what a command
in the repository printed."""

from __future__ import annotations

import re
from pathlib import Path


def update_readme_block(readme: Path, name: str, markdown: str, command: str) -> None:
    """Replace the block called ``name`` in ``readme`` by ``markdown`` and the command that made it."""
    text = readme.read_text()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in text or end not in text:
        raise ValueError(f"{readme} has no {start} ... {end} block")
    block = f"{start}\n{markdown}\n\nMade by `{command}`.\n{end}"
    readme.write_text(re.sub(re.escape(start) + ".*" + re.escape(end), lambda _: block, text, flags=re.S))
