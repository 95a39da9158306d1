"""The README's Python snippets run pasted alone, and print what their comments say."""

import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_readme_has_its_three_snippets():
    assert len(SNIPPETS) == 3


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_a_readme_snippet_runs_alone_and_its_comments_hold(index):
    if "import torch" in SNIPPETS[index]:
        torch = pytest.importorskip("torch", reason="the GPU snippet needs torch (it runs on torch's CPU without CUDA)")
    namespace: dict = {}
    exec(compile(SNIPPETS[index], f"README.md snippet {index + 1}", "exec"), namespace)  # a fresh namespace
    if index == 0:  # the comments: 5.1e-08 1.3e-09, 'optimal', 0.989
        model = namespace["model"]
        # as printed to two digits (the last one may move with the BLAS of another machine)
        assert model.gap_[0] == pytest.approx(5.1e-08, rel=0.1) and model.relative_gap_[0] == pytest.approx(1.3e-09, rel=0.1)
        assert model.status_[0] == "optimal"
        X_test, X_train, y_test = namespace["X_test"], namespace["X_train"], namespace["y_test"]
        assert f"{model.score(namespace['simpson'](X_test, X_train), y_test):.3f}" == "0.989"
    elif index == 2:  # 'optimal', and the decisions in the input's namespace
        assert namespace["model"].status_[0] == "optimal" and isinstance(namespace["scores"], torch.Tensor)
        assert namespace["scores"].device.type == namespace["device"]
    else:  # "6 iterations"
        assert namespace["r"].iterations == 6 and namespace["r"].status == "optimal"
        assert namespace["c"].lower <= namespace["r"].lower <= namespace["r"].upper <= namespace["c"].upper


def test_the_guides_calibration_example_runs_alone_and_gives_probabilities():
    guide = (README.parent / "docs" / "guide.md").read_text(encoding="utf-8")
    [snippet] = [s for s in re.findall(r"```python\n(.*?)```", guide, flags=re.DOTALL) if "CalibratedClassifierCV" in s]
    namespace: dict = {}
    exec(compile(snippet, "the guide's calibration example", "exec"), namespace)
    calibrated, X, y = namespace["calibrated"], namespace["X"], namespace["y"]
    probabilities = calibrated.predict_proba(X[200:])
    assert probabilities.shape == (len(X) - 200, 2) and np.all((probabilities >= 0) & (probabilities <= 1))
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert np.mean(calibrated.classes_[probabilities.argmax(axis=1)] == y[200:]) > 0.9
