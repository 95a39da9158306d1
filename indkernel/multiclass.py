"""Any number of classes from binary problems: one-vs-rest (the default) or one-vs-one.

One-vs-rest solves one binary problem per class on the whole training set, so every problem
shares the one eigendecomposition of K0 that the rank-one oracle updates (``eq:kstar``): k
classes cost one O(n³) step, then O(n²) per iteration of each problem. One-vs-one solves a
problem per pair of classes on that pair's rows (each its own, smaller, decomposition) and
predicts by votes, as libsvm does.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from sklearn.utils.multiclass import _ovr_decision_function

#: ``decision_function_shape`` values: the strategy and the shape of ``decision_function``.
SHAPES = ("ovr", "ovo")


@dataclass(frozen=True)
class BinaryTask:
    """One binary problem of a multiclass fit."""

    rows: np.ndarray  # the training rows it is solved on
    labels: np.ndarray  # their labels; the larger one (True, or the pair's second class) is +1
    name: str  # for messages: "class 3 against the rest"


def binary_tasks(y: np.ndarray, classes: np.ndarray, shape: str) -> list[BinaryTask]:
    """The binary problems of a fit on labels ``y`` (``classes = np.unique(y)``)."""
    everything = np.arange(len(y))
    names = [repr(c.item() if isinstance(c, np.generic) else c) for c in classes]
    if len(classes) == 2:
        return [BinaryTask(everything, y, f"class {names[1]} against class {names[0]}")]
    if shape == "ovr":
        return [BinaryTask(everything, y == c, f"class {name} against the rest") for c, name in zip(classes, names, strict=True)]
    tasks = []
    for i, j in combinations(range(len(classes)), 2):
        rows = np.flatnonzero((y == classes[i]) | (y == classes[j]))
        tasks.append(BinaryTask(rows, y[rows] == classes[j], f"class {names[j]} against class {names[i]}"))
    return tasks


def decide(decisions: np.ndarray, classes: np.ndarray, shape: str) -> tuple[np.ndarray, np.ndarray]:
    """``(decision_function, predicted labels)`` from the binary decisions, one column per task
    (positive for the task's +1 class).

    Two classes: the one column (positive means ``classes[1]``). ``"ovr"``: the (m, k) columns,
    the largest wins. ``"ovo"``: as scikit-learn's ``SVC`` with ``decision_function_shape="ovo"``,
    column (i, j) positive in favour of ``classes[i]``; the class with the most votes wins, ties
    broken by the summed confidences.
    """
    if len(classes) == 2:
        column = decisions[:, 0]
        return column, classes[(column > 0).astype(int)]
    if shape == "ovr":
        return decisions, classes[np.argmax(decisions, axis=1)]
    votes = _ovr_decision_function(decisions > 0, decisions, len(classes))
    return -decisions, classes[np.argmax(votes, axis=1)]
