"""``indkernel.verify``: the certificate at a point beside independent references, each a certified
bracket on ``p*`` of its own.

A reference is a cvxpy model of the problem (:mod:`indkernel.solvers.models`) solved by a conic
solver, whose answer is turned into a bracket that holds whatever the solver's accuracy:

- **lower bounds** come from a point α of A: the model's α projected exactly onto A, and
  ``f(α) <= p*`` evaluated by a dense eigendecomposition of ``A = K0 + uuᵀ/(4ρ)`` (the ``"eigh"``
  oracle, not the rank-one update the solvers use), minus its round-off allowance;
- **upper bounds** come from a PSD kernel K: ``p* <= max_{α ∈ A} L(α, K) <= P_K(β) + penalty(K)``
  for any β (weak duality of the machine on K, ``P_K`` its primal at the best offset), with β from
  the machine's dual QP on K solved by the same conic solver, plus a round-off allowance.

The max-min model (``eq:kern_learn``) gives α, and the kernel ``K*(α)``; the min-max model
(``eq:kern_learn_hard``) gives K (projected onto the PSD cone), and the α of the machine on it.
"""

from __future__ import annotations

import html
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

import formulations

from .._validation import check_vector
from ..core.certificate import Certificate
from ..core.problem import IndefiniteProblem
from ..core.proxy import ROUNDOFF_FACTOR, UNIT_ROUNDOFF
from .direct_sdp import SDP_MAX_N
from .models import dual_qp_model, maxmin_model, minmax_model, model_refusal, solve_quietly
from .result import SolveResult

#: The references :func:`verify` knows.
MODELS = ("maxmin", "minmax")
COLUMNS = ["source", "lower", "upper", "width", "relative_width", "reported", "solver", "seconds"]


class VerificationWarning(UserWarning):
    """Two certified brackets on ``p*`` do not intersect: one of them is wrong."""


@dataclass(frozen=True)
class Verification:
    """Certified brackets on ``p*`` from several sources, side by side (:func:`verify`).

    Attributes
    ----------
    table : pandas.DataFrame
        A row per source (``"certificate"``: indkernel's certificate at the point; ``"maxmin"``,
        ``"minmax"``: the references) with the columns source, lower, upper, width
        (``upper - lower``), relative_width (width over the certificate's scale ``|ℓ(α)| +
        ½max(uᵀK*u, uᵀ|K0|u)`` at the source's α), reported (the conic solver's own optimal value,
        which need not lie in the bracket), solver (the conic solver whose answer gave the bracket)
        and seconds.
    solver : str, the conic solver asked first.
    """

    table: pd.DataFrame
    solver: str

    @property
    def p_star(self) -> tuple[float, float]:
        """``(lower, upper)``: the intersection of every bracket (empty, lower > upper, when they disagree)."""
        return float(self.table["lower"].max()), float(self.table["upper"].min())

    @property
    def agree(self) -> bool:
        """True when every bracket intersects every other (so they share ``p*``)."""
        lower, upper = self.p_star
        return lower <= upper

    def disagreements(self) -> list[str]:
        """A sentence per pair of sources whose brackets do not intersect."""
        rows = self.table.to_dict("records")
        return [f"{a['source']}'s lower bound {a['lower']:.12g} is above {b['source']}'s upper bound {b['upper']:.12g}"
                for a in rows for b in rows if a["lower"] > b["upper"]]

    def __repr__(self) -> str:
        lower, upper = self.p_star
        return (f"Verification(agree={self.agree}, p_star=[{lower:.12g}, {upper:.12g}], width={upper - lower:.3g}, "
                f"sources={list(self.table['source'])}, solver={self.solver!r})")

    def _repr_html_(self) -> str:
        lower, upper = self.p_star
        caption = html.escape(f"Verification ({self.solver}): {'agree' if self.agree else 'DISAGREE'}, "
                              f"p* in [{lower:.12g}, {upper:.12g}]")
        return f"<p>{caption}</p>" + self.table.to_html(index=False, float_format=lambda v: f"{v:.12g}")


def verify(problem: IndefiniteProblem, alpha_or_result=None, *, models=MODELS, solver: str | None = None,
           max_n: int = SDP_MAX_N) -> Verification:
    """Check a point's certificate against independent references, each a certified bracket on ``p*``.

    Parameters
    ----------
    problem : IndefiniteProblem
        Any (machine, penalty) pair with a finite ρ (the references have the kernel as a variable).
    alpha_or_result : None, a feasible (dim,) array, or a :class:`SolveResult`
        The point whose certificate (:meth:`IndefiniteProblem.certify`, the tight bound) is shown
        beside the references; None shows only the references.
    models : sequence of {"maxmin", "minmax"}, default both
        The references (see the module docstring): the max-min model (``eq:kern_learn``, an SDP, or
        a conic quartic for the Mercer penalty) brackets ``p*`` by ``f`` at its α and the machine on
        ``K*(α)``; the min-max model (``eq:kern_learn_hard``) by the machine on its K and f at the
        machine's α there.
    solver : str, optional
        The conic solver of the references: MOSEK where it is installed and licensed, else Clarabel
        (:func:`formulations.reference_solver`), at ``formulations.ACCURATE[solver]`` (Clarabel:
        gap and feasibility tolerances 1e-10, KKT ratio 1e-8, 500 iterations; SCS: 1e-9, 200,000
        iterations; MOSEK: its defaults; tighter settings make Clarabel stop "almost solved"
        sooner). Where it ends short of them ("optimal_inaccurate"), the second opinion
        (``formulations.SECOND_OPINION``, SCS) solves the model too and the narrower bracket is kept. With them the max-min reference is within 1e-8 of the certificate's scale on
        problems up to n = 60 (``tests/test_verify.py``); the min-max reference's upper bound is
        about as tight, its lower bound looser (Clarabel's ``matrix_frac`` kernel is off by about
        1e-4, and f at the machine's α on it loses that much). The SDPs have n² variables: seconds
        at n = 40, minutes at n = 100.
    max_n : int, default 100
        Above this size the references are refused before any work (``models=()`` still
        certifies the point); pass a larger one to insist.

    Returns
    -------
    Verification
        ``.table`` (a row per source), ``.agree``, ``.p_star``. A
        :class:`VerificationWarning` names the sources whose brackets do not intersect.

    Raises
    ------
    ValueError
        For an unknown model or solver, a problem with no conic model (ρ = ∞), or an α outside A,
        before any solve.

    Examples
    --------
    >>> from indkernel import SVMProblem, solve, verify
    >>> from indkernel.datasets import load_digits_pair
    >>> from indkernel.kernels import simpson
    >>> X, y = load_digits_pair(3, 5)
    >>> p = SVMProblem(simpson(X[:30]), y[:30], C=10.0, rho=1.0)
    >>> check = verify(p, solve(p, "newton", tol=1e-8))
    >>> check.agree, list(check.table.source)
    (True, ['certificate', 'maxmin', 'minmax'])
    """
    models = tuple(models)
    unknown = [m for m in models if m not in MODELS]
    if unknown or not models and alpha_or_result is None:
        raise ValueError(f"models must be a sequence of {MODELS} (at least one, or a point to certify); got {models!r}")
    solver = formulations.reference_solver() if solver is None else solver
    if models and solver not in formulations.available_solvers():
        raise ValueError(f"solver {solver!r} cannot solve here; the usable ones are {formulations.available_solvers()}")
    if models and (reason := model_refusal(problem)) is not None:
        raise ValueError(reason)
    if models and problem.n > max_n:
        raise ValueError(f"the references are refused above n = {max_n} (here n = {problem.n}): their conic models have "
                         "n² variables and take minutes at n = 100; verify a subset, pass models=() to certify the "
                         "point alone, or pass max_n= to insist")
    alpha = _point(problem, alpha_or_result)
    rows = []
    if alpha is not None:
        started = time.perf_counter()
        certificate = problem.certify(alpha, bound="tight")
        rows.append(_row("certificate", (certificate.lower, certificate.upper, certificate.scale, np.nan), "", started))
    if models:
        reference = IndefiniteProblem(problem.K0, problem.machine, problem.penalty, oracle="eigh")
        for name in models:
            started = time.perf_counter()
            rows.append(_reference_row(name, problem, reference, solver, started))
    result = Verification(pd.DataFrame(rows, columns=COLUMNS), solver)
    if not result.agree:
        warnings.warn("the certified brackets on p* disagree: " + "; ".join(result.disagreements()),
                      VerificationWarning, stacklevel=2)
    return result


def _point(problem: IndefiniteProblem, alpha_or_result) -> np.ndarray | None:
    if alpha_or_result is None:
        return None
    if isinstance(alpha_or_result, SolveResult):
        return alpha_or_result.alpha
    if isinstance(alpha_or_result, Certificate):
        raise TypeError("alpha_or_result must be a point or a SolveResult, not a Certificate (it holds no alpha)")
    return check_vector(alpha_or_result, problem.dim, "alpha_or_result")  # certify checks that it is in A


#: ``(lower, upper, scale, reported)`` of a source.
_Bracket = tuple[float, float, float, float]


def _row(source: str, bracket: _Bracket, solver: str, started: float) -> dict:
    lower, upper, scale, reported = bracket
    width = upper - lower
    return dict(source=source, lower=lower, upper=upper, width=width,
                relative_width=width / scale if scale > 0 else np.inf, reported=reported, solver=solver,
                seconds=time.perf_counter() - started)


def _reference_row(name: str, problem: IndefiniteProblem, reference: IndefiniteProblem, solver: str,
                   started: float) -> dict:
    """The reference ``name``'s row: its bracket from ``solver``; where that solver ends short of its
    tolerances ("optimal_inaccurate"), also from the second opinion (``formulations.SECOND_OPINION``),
    keeping the narrower bracket (both are certified)."""
    best: tuple[_Bracket, str] | None = None
    for attempt in dict.fromkeys((solver, formulations.SECOND_OPINION)):
        if attempt not in formulations.available_solvers():
            continue
        options = {"solver": attempt, **formulations.ACCURATE.get(attempt, {})}
        bracket, accurate = _REFERENCES[name](problem, reference, options)
        if best is None or bracket[1] - bracket[0] < best[0][1] - best[0][0]:
            best = bracket, attempt
        if accurate:
            break
    assert best is not None  # the first solver is available (checked by verify)
    return _row(name, *best, started)


def _maxmin(problem: IndefiniteProblem, reference: IndefiniteProblem, options: dict) -> tuple[_Bracket, bool]:
    """The max-min model's bracket: ``f`` at its α (projected onto A), the machine on ``K*(α)``;
    and whether the solver reached its tolerances."""
    model = maxmin_model(problem)
    reported = _solve(model, options, "max-min")
    alpha = problem.from_model(model.solution("alpha"))
    lower = reference.certify(alpha, bound="free")
    upper, _ = kernel_upper_bound(problem, reference.proxy_kernel(alpha), options)
    return (lower.lower, upper, lower.scale, reported), model.problem.status == "optimal"


def _minmax(problem: IndefiniteProblem, reference: IndefiniteProblem, options: dict) -> tuple[_Bracket, bool]:
    """The min-max model's bracket: the machine on its K (onto the PSD cone), ``f`` at the machine's
    α there; and whether the solver reached its tolerances."""
    model = minmax_model(problem)
    reported = _solve(model, options, "min-max")
    values, vectors = np.linalg.eigh(_symmetric(model.solution("K")))
    upper, alpha = kernel_upper_bound(problem, (vectors * np.maximum(values, 0.0)) @ vectors.T, options)
    lower = reference.certify(alpha, bound="free")
    return (lower.lower, upper, lower.scale, reported), model.problem.status == "optimal"


_REFERENCES = {"maxmin": _maxmin, "minmax": _minmax}


def _solve(model: formulations.Formulation, options: dict, name: str) -> float:
    try:
        return solve_quietly(model, **options)
    except RuntimeError as exc:
        raise RuntimeError(f"the {name} reference failed with {options['solver']}: {exc}") from exc


def _symmetric(K: np.ndarray) -> np.ndarray:
    return (K + K.T) / 2


def kernel_upper_bound(problem: IndefiniteProblem, K, options: dict) -> tuple[float, np.ndarray]:
    """``(upper, α)``: a certified upper bound on ``p*`` from a (nearly) PSD kernel K, and the α of
    the machine on K (projected onto A).

    ``p* <= max_{α ∈ A} L(α, K') <= P_{K'}(β) + penalty(K')`` for every PSD ``K'`` and every β,
    with ``P_{K'}`` the machine's primal at the best offset (``½βᵀK'β + loss(K'β)``). Here
    ``K' = K + sI`` with the shift s that makes it PSD for certain (K's smallest computed eigenvalue,
    less LAPACK's backward error ``ROUNDOFF_FACTOR·n·u·‖K‖_F`` twice) and ``β = u(α)`` from the
    machine's dual QP on K' (:func:`indkernel.solvers.models.dual_qp_model`) solved with
    ``options``; the sums carry ``γ = ROUNDOFF_FACTOR·n·u`` (``n²`` for the penalty's) times their magnitude.
    """
    K = _symmetric(np.asarray(K, dtype=float))
    n = K.shape[0]
    gamma = ROUNDOFF_FACTOR * n * UNIT_ROUNDOFF
    size = float(np.linalg.norm(K))
    shift = max(0.0, -float(np.linalg.eigvalsh(K)[0])) + 2 * gamma * size
    K = K + shift * np.eye(n)
    qp = dual_qp_model(problem, K)
    _solve(qp, options, "dual QP")
    alpha = problem.from_model(qp.solution("alpha"))
    beta = problem.machine.u(alpha)
    decision = K @ beta
    decision_error = gamma * (np.abs(K) @ np.abs(beta))
    loss, offset, magnitude, weights = problem.machine.primal_terms(decision, float(decision_error.max()))
    quadratic = 0.5 * float(beta @ decision)
    penalty = problem.kernel_penalty(K)
    upper = quadratic + loss + penalty
    allowance = (gamma * (0.5 * float(np.abs(beta) @ np.abs(decision)) + magnitude + abs(upper))
                 + 0.5 * float(np.abs(beta) @ decision_error) + float(weights @ decision_error)
                 + ROUNDOFF_FACTOR * n * n * UNIT_ROUNDOFF * penalty
                 + problem.penalty.kernel_clipping_allowance(K))  # PerturbSVM's clip of K0 to (K0)_+
    return float(upper + allowance), alpha
