"""The ten-class USPS experiment (quick version, as CI runs it) and the measurement it relies on."""

import os

import numpy as np
import pytest
from problems import NEEDS_DATA

from indkernel.cli import main
from indkernel.reproduction import usps_multiclass
from indkernel.reproduction.measure import measure, resident_bytes

configured = pytest.mark.skipif(not os.environ.get("INDKERNEL_DATA"),
                                reason=NEEDS_DATA)


@pytest.mark.skipif(resident_bytes() is None, reason="no /proc/self/statm on this system")
def test_peak_memory_sees_a_temporary_array():
    """A 400 MB array that lives only inside the call shows in the sampled peak, and is gone after."""
    before = resident_bytes()

    def allocate():
        block = np.ones(50_000_000)  # 400 MB, touched
        return float(block[::4096].sum())

    measured = measure(allocate)
    assert measured.value == pytest.approx(50_000_000 / 4096, abs=1)
    assert measured.peak_bytes - before > 0.9 * 400e6
    assert resident_bytes() - before < 0.5 * 400e6
    assert measured.seconds > 0


@pytest.mark.slow
@configured
def test_quick_ten_class_run_through_the_command_line(tmp_path, capsys):
    assert main(["tables", "--multiclass", "--quick", "--quiet", "--out", str(tmp_path)]) == 0
    markdown = capsys.readouterr().out
    table = usps_multiclass.pd.read_csv(tmp_path / "usps_multiclass.csv")
    assert (tmp_path / "usps_multiclass.md").read_text().strip() == markdown.strip()
    methods = {"Denoise", "Flip", "Shift", "SVM", *usps_multiclass.INDEFINITE}
    for kind in ("TD", "SS"):
        rows = table[table.similarity == kind]
        assert methods <= set(rows.method) and set(rows.rule) == {"—", "raw", "consistent", "transductive"}
    assert table.test_error.between(0, 100).all()
    fitted = table[table.method != "1-NN"]
    assert (fitted.fit_s > 0).all() and (fitted.peak_GB > 0).all()
    indefinite = table[table.method.isin(usps_multiclass.INDEFINITE)]
    assert len(indefinite) == 2 * 2 * 3  # similarities x strategies x test rules
    assert set(table[~table.method.isin(usps_multiclass.INDEFINITE)].rule) == {"—"}
    assert indefinite.certified.all() and indefinite.parameters.str.contains("rho=").all()
    nearest = table[table.method == "1-NN"].set_index("similarity").test_error
    assert nearest["TD"] < nearest["Euclidean"]  # tangent distance knows the digits' invariances
    td = table[(table.similarity == "TD") & (table.method == "Denoise")].test_error.item()
    assert td < 12  # 8.5 on these 300/200 images when written; chance is 90
    assert table.published.isna().all()  # the published errors are for the full split only


def test_multiclass_tables_take_no_digits_flag(capsys):
    assert main(["tables", "--multiclass", "--digits", "--quiet"]) == 2
    assert "takes no --digits" in capsys.readouterr().err


def test_a_training_subset_size_out_of_range_is_refused(capsys):
    assert main(["tables", "--multiclass", "--n-train", "5", "--quiet"]) == 2
    assert "n_train must be between 10 and 7291" in capsys.readouterr().err


def test_splits_are_written_one_by_one_resumed_and_paired_against_denoise(tmp_path, monkeypatch):
    """--splits with --n-train: each split's rows in their own file (a second run computes only the
    missing ones), then mean ± sd and the paired difference to denoise on the same similarity."""
    calls = []

    def fake_run(similarities, *, seed, indefinite, **options):
        calls.append(seed)
        assert indefinite == {"Indefinite SVM": "ovo"}
        return usps_multiclass.pd.DataFrame([
            dict(similarity="Euclidean", method="1-NN", rule="—", parameters="", test_error=8.0),
            dict(similarity="SS", method="Denoise", rule="—", parameters="C=1", test_error=8.0 + seed, fit_s=1.0),
            dict(similarity="SS", method="Indefinite SVM", rule="consistent", parameters="C=1, rho=1",
                 test_error=7.0 + 2 * seed, fit_s=2.0, certified=True)])

    monkeypatch.setattr(usps_multiclass, "run", fake_run)
    usps_multiclass.write(tmp_path, n_train=500, splits=2, verbose=False)
    (tmp_path / "split-1.csv").unlink()
    result = usps_multiclass.write(tmp_path, n_train=500, splits=3, verbose=False)
    assert calls == [0, 1, 1, 2]
    assert result["markdown"].startswith("Made by `indkernel tables --multiclass --n-train 500 --splits 3`")
    assert "| SS | Indefinite SVM | consistent | 9.00 ± 2.00 | +0.00 (1.000) | 2.0 |" in result["markdown"]
    assert "| SS | Denoise | — | 9.00 ± 1.00 | — | 1.0 |" in result["markdown"]
    assert "| Euclidean | 1-NN | — | 8.00 ± 0.00 | — |  |" in result["markdown"]  # no denoise to pair with
    (tmp_path / "split-2.csv").write_text("split,split_min")  # damaged by an interrupted write: named, redone
    with pytest.warns(UserWarning, match="split-2.csv is damaged"):
        again = usps_multiclass.write(tmp_path, n_train=500, splits=3, verbose=False)
    assert calls == [0, 1, 1, 2, 2] and again["markdown"] == result["markdown"]
    with pytest.raises(ValueError, match="--n-train"):
        usps_multiclass.write(tmp_path, splits=2)
