"""Any number of classes from binary problems, with scikit-learn's ``SVC`` contract.

``multi_class`` chooses the training strategy and ``decision_function_shape`` only the shape of
``decision_function``, as in ``SVC``:

- ``multi_class="ovo"`` (the default, as libsvm): a problem per pair of classes on that pair's
  rows (each its own, smaller, eigendecomposition); prediction by votes. Its decision function
  is the (m, k(k-1)/2) pairwise decisions (``decision_function_shape="ovo"``) or, by default,
  the (m, k) votes plus a monotone transform of the summed confidences (``"ovr"``), exactly as
  ``SVC`` computes them.
- ``multi_class="ovr"``: one problem per class against the rest on the whole training set, so
  every problem shares the one eigendecomposition of K0 that the rank-one oracle updates
  (``eq:kstar``); its decision function is the (m, k) margins, the largest wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from sklearn.utils.multiclass import _ovr_decision_function

#: ``multi_class`` values: the training strategy.
STRATEGIES = ("ovo", "ovr")
#: ``decision_function_shape`` values: the shape of ``decision_function`` with one-vs-one training.
SHAPES = ("ovr", "ovo")


@dataclass(frozen=True)
class BinaryTask:
    """One binary problem of a multiclass fit."""

    rows: np.ndarray  # the training rows it is solved on
    labels: np.ndarray  # their labels; the larger one (True, or the pair's second class) is +1
    name: str  # for messages: "class 3 against the rest"


def binary_tasks(y: np.ndarray, classes: np.ndarray, strategy: str, rows: np.ndarray | None = None) -> list[BinaryTask]:
    """The binary problems of a fit on labels ``y`` (``classes = np.unique(y)``), on the training
    ``rows`` (all by default; a fit leaves out the samples of weight 0)."""
    rows = np.arange(len(y)) if rows is None else rows
    names = [repr(c.item() if isinstance(c, np.generic) else c) for c in classes]
    if len(classes) == 2:
        return [BinaryTask(rows, y[rows], f"class {names[1]} against class {names[0]}")]
    if strategy == "ovr":
        return [BinaryTask(rows, y[rows] == c, f"class {name} against the rest") for c, name in zip(classes, names, strict=True)]
    tasks = []
    for i, j in combinations(range(len(classes)), 2):
        pair = rows[(y[rows] == classes[i]) | (y[rows] == classes[j])]
        tasks.append(BinaryTask(pair, y[pair] == classes[j], f"class {names[j]} against class {names[i]}"))
    return tasks


def libsvm_layout(support: np.ndarray, coefficients: np.ndarray, intercepts: np.ndarray, class_index: np.ndarray,
                  n_classes: int, strategy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``SVC``'s ``(support_, dual_coef_, intercept_)`` from each binary problem's ``y_i α_i`` on
    the ``support`` (sorted indices; one row per problem, positive for the task's +1 class) and
    its offset.

    The support is ordered by class, then index, as libsvm's. Two classes (and one-vs-rest, which
    ``SVC`` does not train): the rows as they are. One-vs-one on k > 2 classes: libsvm's pair
    (i, j) is positive for class i, so coefficients and intercepts change sign, and the
    (k - 1, n_SV) packing is libsvm's: in pair (i, j), the coefficients of class i's support
    vectors go to row j - 1, those of class j's to row i.
    """
    classes = class_index[support]
    order = np.lexsort((support, classes))
    support, classes, coefficients = support[order], classes[order], coefficients[:, order]
    if n_classes == 2 or strategy == "ovr":
        return support, coefficients, intercepts
    packed = np.zeros((n_classes - 1, support.size))
    for pair, (i, j) in enumerate(combinations(range(n_classes), 2)):
        packed[j - 1, classes == i] = -coefficients[pair, classes == i]
        packed[i, classes == j] = -coefficients[pair, classes == j]
    return support, packed, -intercepts


def check_contract(strategy: str, shape: str, break_ties: bool, n_classes: int, estimator: str) -> None:
    """Refuse the combinations ``SVC`` refuses, and a pairwise shape without pairwise problems."""
    if n_classes > 2 and strategy == "ovr" and shape == "ovo":
        raise ValueError(f"{estimator}: decision_function_shape='ovo' gives the pairwise decisions, which "
                         "multi_class='ovr' does not train; use multi_class='ovo' or decision_function_shape='ovr'")
    if break_ties and shape == "ovo":
        raise ValueError("break_ties must be False when decision_function_shape is 'ovo' (as scikit-learn's SVC)")


def decide(decisions: np.ndarray, classes: np.ndarray, strategy: str, shape: str = "ovr",
           break_ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(decision_function, predicted labels)`` from the binary decisions, one column per task
    (positive for the task's +1 class).

    Two classes: the one column (positive means ``classes[1]``). ``strategy="ovr"``: the (m, k)
    columns, the largest wins. ``strategy="ovo"``: as ``SVC``. Column (i, j) of the ``"ovo"`` shape
    is positive in favour of ``classes[i]``; the ``"ovr"`` shape is
    ``sklearn.utils.multiclass._ovr_decision_function`` of those (votes plus transformed
    confidences); the label is libsvm's, the most votes with ties to the first class, or with
    ``break_ties`` the largest ``"ovr"`` decision.
    """
    if len(classes) == 2:
        column = decisions[:, 0]
        return column, classes[(column > 0).astype(int)]
    if strategy == "ovr":
        return decisions, classes[np.argmax(decisions, axis=1)]
    ovr = _ovr_decision_function(decisions > 0, decisions, len(classes))
    votes = np.zeros_like(ovr)
    for pair, (i, j) in enumerate(combinations(range(len(classes)), 2)):
        wins_j = decisions[:, pair] >= 0  # libsvm: a decision of 0 counts for the second class
        votes[:, j] += wins_j
        votes[:, i] += ~wins_j
    return (ovr if shape == "ovr" else -decisions), classes[np.argmax(ovr if break_ties else votes, axis=1)]
