"""The rules for new points (``test_kernel``): how a fitted machine scores a point it has no dual
variable for. The proxy kernel K* exists only on the training points, so a new point needs a rule.

- ``"consistent"`` (the default): the row of K* that the learned kernel gives a point without a
  dual variable. With ``A = K0 + ββᵀ/(4ρ) = Q diag(λ) Qᵀ`` at the solution and the projector
  ``P = Q diag(λ⁺/λ) Qᵀ`` onto its positive eigenspace, ``K* = AP`` (``eq:kstar``), so a training
  row of K* is the row of A times P; a new point's row of A is its raw similarities ``k0(x)``,
  and its decision ``k0(x)ᵀw + b`` with ``w = Pβ`` (``test_coef_``), formed once at fit from the
  rank-one oracle's eigenvectors (:meth:`indkernel.core.problem.IndefiniteProblem.consistent_coef`).
  O(n) per point, each point on its own; ``w`` is dense, so every training point is in the
  expansion. On the training rows it differs from the fitted decisions ``K*β`` by the rank-one
  term ``(βᵀPβ)β/(4ρ)`` alone.
- ``"raw"``: ``k0(x)ᵀβ + b``, the raw similarities to the support vectors, which the learned
  kernel never saw (the rule of the authors' code; ``"inductive"`` is its deprecated name).
- ``"transductive"``: the paper's heuristic (section ``ss:interpretation``): form the full
  (train + test) similarity matrix, replace its train block by ``K0 + ββᵀ/(4ρ)``, clip the
  negative eigenvalues of the whole matrix, and classify with its test×train block. It needs the
  test×test similarities and decomposes an (n+m)×(n+m) matrix, and each prediction depends on the
  whole test batch. With ``kernel="precomputed"`` pass ``predict`` the test rows of the full
  matrix, shape (m, n + m): columns ``[:n]`` against the training points, ``[n:]`` among the
  test points. With a kernel on features the estimator computes both blocks itself.
- Two variants of the consistent map, for the study of the rules (``indkernel tables --rules``):
  ``"consistent-K0"`` (P from K0 alone, the map denoise applies to its test rows) and
  ``"consistent-flip"`` (``Q diag(sign λ) Qᵀ`` instead of ``Q diag(λ⁺/λ) Qᵀ``, that is
  ``w = 2Pβ - β``, the map of flip).

Each rule is a small object: what it computes at fit (:meth:`TestRule.coefficients`, only for the
rule the model is fitted with; another rule set after ``fit`` computes it on first use from the
training similarity) and how it decides (:meth:`TestRule.decide`). The default was chosen by
held-out accuracy over the paper's data sets (``indkernel tables --rules``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator

import numpy as np

from .._progress import tqdm
from .._validation import check_kernel, check_memory
from ..core.namespace import device_of, foreign_namespace, to_numpy
from ..core.proxy import ProxyPoint, RankOneProxy, decompose_concurrently
from ..core.threads import blas_thread_count
from . import progress


class TestRule(ABC):
    """A rule for new points.

    Attributes
    ----------
    name : str, the ``test_kernel`` value.
    support_only : bool, it reads only the similarities to the support vectors.
    keeps_training_similarity : bool, its decisions need K0 itself (a pickled model keeps it).
    needs_test_block : bool, it needs the test×test similarities too.
    """

    name: str
    support_only = False
    keeps_training_similarity = False
    needs_test_block = False

    def coefficients(self, oracle, point: ProxyPoint) -> np.ndarray | None:
        """The (n,) ``w`` of the decision ``k0(x)ᵀw + b`` of one binary problem, from its oracle and
        the oracle's point at ``u = β`` (None: the rule decides otherwise)."""
        return None

    @abstractmethod
    def decide(self, model, cross: np.ndarray, among: np.ndarray) -> np.ndarray:
        """(m, n_problems): the decisions at m new points from their similarities to the training
        points (``cross``, only the support's columns if :attr:`support_only`) and among themselves."""


class Raw(TestRule):
    """``k0(x)ᵀβ + b``: the raw similarities to the support vectors."""

    name, support_only = "raw", True

    def decide(self, model, cross, among):
        return linear_decisions(cross, model._dual_coef, model._intercepts)


class Consistent(TestRule):
    """``k0(x)ᵀPβ + b``, P the projector onto the positive eigenspace of ``K0 + ββᵀ/(4ρ)``."""

    name = "consistent"

    def coefficients(self, oracle, point):
        return point.project_positive(point.u)

    def decide(self, model, cross, among):
        return linear_decisions(cross, model._rule_coefficients(self), model._intercepts)


def linear_decisions(cross, coefficients: np.ndarray, intercepts: np.ndarray) -> np.ndarray:
    """``cross @ coefficientsᵀ + intercepts``: the product where ``cross`` lives (a GPU's array of
    another namespace: the coefficients go there), the (m, problems) result in NumPy."""
    xp = foreign_namespace(cross)
    if xp is None:
        return cross @ coefficients.T + intercepts
    on_device = xp.asarray(np.ascontiguousarray(coefficients.T), device=device_of(cross))
    return to_numpy(xp.astype(cross, xp.float64, copy=False) @ on_device) + intercepts


class ConsistentFlip(Consistent):
    """The study's variant: ``w = 2Pβ - β`` (``Q diag(sign λ) Qᵀβ``, the map of flip)."""

    name = "consistent-flip"

    def coefficients(self, oracle, point):
        return 2 * point.project_positive(point.u) - point.u


class ConsistentK0(Consistent):
    """The study's variant: ``w = P0β``, P0 the projector onto K0's positive eigenspace (the map
    denoise applies to its test rows); a Mercer oracle's K0 is PSD, where ``k0(x)ᵀP0 = k0(x)ᵀ``."""

    name = "consistent-K0"

    def coefficients(self, oracle, point):
        if not hasattr(oracle, "spectrum"):
            return point.u
        values, vectors = oracle.spectrum
        positive = vectors[:, values > 0]
        return positive @ (positive.T @ point.u)


class Transductive(TestRule):
    """The paper's heuristic (``ss:interpretation``): the test×train block of
    ``[[K0 + ββᵀ/(4ρ), crossᵀ], [cross, among]]_+`` times β."""

    name, keeps_training_similarity, needs_test_block = "transductive", True, True

    def decide(self, model, cross, among):
        n, m = model.shape_fit_[0], len(among)
        check_memory(n + m, f"the transductive rule on {n} training and {m} test points", 3,
                     "predict in smaller batches, or use test_kernel='consistent'")
        if m > 1:  # symmetric as K0 must be: an asymmetric block would be averaged silently
            among = check_kernel(among, name="the test×test block X[:, n_train:]")
        K0, decisions = model._training_similarity(), []
        for rows, oracle, beta, intercept in zip(model._task_rows, _oracles(model, K0, cross, among),
                                                 model._betas(), model._intercepts, strict=True):
            decisions.append(transductive_decision(oracle, beta[rows], model._fit_rho) + intercept)
        return np.column_stack(decisions)


def _oracles(model, K0: np.ndarray, cross: np.ndarray, among: np.ndarray) -> Iterator[RankOneProxy]:
    """Each fitted problem's oracle on its rows and the test points, decomposed: the problems on
    all training rows share one; one-vs-one pairs each have their own, made and decomposed as
    many at a time as BLAS has threads (:func:`indkernel.core.proxy.decompose_concurrently`), so
    only that many (pair + test)-sized matrices are alive at once."""
    rows, verbose = model._task_rows, bool(model.verbose)
    if rows[0].size == model.shape_fit_[0]:
        oracle = RankOneProxy(full_matrix(K0, cross, among))
        progress.decompose(oracle, "the train + test similarities", verbose)
        yield from [oracle] * len(rows)
        return
    width = blas_thread_count()
    with tqdm(total=len(rows), desc="eigendecompositions of the train + test similarities",
              disable=not verbose, leave=False) as bar:
        for start in range(0, len(rows), width):
            oracles = [RankOneProxy(full_matrix(K0[np.ix_(r, r)], cross[:, r], among)) for r in rows[start:start + width]]
            decompose_concurrently(oracles, lambda: bar.update(1))
            yield from oracles


def full_matrix(K0: np.ndarray, cross: np.ndarray, among: np.ndarray) -> np.ndarray:
    """The (train + test) similarity matrix ``[[K0, crossᵀ], [cross, among]]`` (``among`` symmetrized)."""
    return np.block([[K0, cross.T], [cross, (among + among.T) / 2]])


def transductive_decision(oracle: RankOneProxy, beta: np.ndarray, rho: float) -> np.ndarray:
    """``ss:interpretation``: the test×train block of ``[[K0 + ββᵀ/(4ρ), crossᵀ], [cross, among]]_+``
    times β. That matrix is the full one, F (the ``oracle``'s), plus ``σuuᵀ`` with ``u = [β; 0]``, so
    the product is ``(K*u)`` of the rank-one update of F's eigendecomposition, test rows: O((n+m)²)
    once F is decomposed, and problems on the same training rows share that decomposition."""
    u = np.concatenate([beta, np.zeros(len(oracle.K0) - len(beta))])
    return oracle(u, rho).Ku[len(beta):]


#: The rules by ``test_kernel`` name (the estimators' first three; the last two for the study).
RULES: dict[str, TestRule] = {rule.name: rule for rule in (Consistent(), Raw(), Transductive(), ConsistentK0(),
                                                            ConsistentFlip())}
