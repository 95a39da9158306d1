"""Outputs written whole: a write that fails midway (a full disk, an interrupt) leaves the file as it was."""

import errno
import re
from pathlib import Path

import pandas as pd
import pytest

import indkernel
from indkernel._files import write_csv, write_text, write_whole


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / "table.csv"
    write_csv(path, pd.DataFrame({"a": [1, 2]}))
    before = path.read_text()
    for failure in (OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()):

        def half_written(file, failure=failure):
            file.write("a,b\n1,")
            raise failure

        with pytest.raises(type(failure)):
            write_whole(path, half_written, mode="w")
        assert path.read_text() == before and [p.name for p in path.parent.iterdir()] == ["table.csv"]
    write_text(path, "replaced\n")
    assert path.read_text() == "replaced\n"


def test_no_module_writes_an_output_in_place():
    """Every file the library writes goes through indkernel._files (the data download aside, which
    pooch writes whole itself): no direct to_csv, write_text, savefig or open-for-writing on a path."""
    in_place = re.compile(r"\.to_csv\((?!file)|\.write_text\(|\.savefig\((?!file)|np\.save\w*\((?!file|out,)"
                          r"|open\([^)]*['\"]w")
    root = Path(indkernel.__file__).parent
    offenders = [f"{path.relative_to(root)}:{number}" for path in root.rglob("*.py") if path.name != "_files.py"
                 for number, line in enumerate(path.read_text().splitlines(), 1) if in_place.search(line)]
    assert offenders == []


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_files_are_written_with_the_permissions_open_gives(tmp_path, umask):
    """A figure or table in a shared folder is readable as the umask allows (``mkstemp`` alone made
    every file 0600)."""
    import os
    import stat

    before = os.umask(umask)
    try:
        write_text(tmp_path / "table.md", "| a |\n")
        with open(tmp_path / "by_open.md", "w") as file:
            file.write("| a |\n")
    finally:
        os.umask(before)
    written = stat.S_IMODE((tmp_path / "table.md").stat().st_mode)
    assert written == stat.S_IMODE((tmp_path / "by_open.md").stat().st_mode) == 0o666 & ~umask
