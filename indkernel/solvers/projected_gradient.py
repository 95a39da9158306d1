"""The paper's projected gradient method (``alg:proj_grad``)."""

from __future__ import annotations

from .._validation import check_positive_scalar
from .tracking import Run, _positive_int


def projected_gradient(problem, run: Run, *, step: float = 5.0, check_every: int = 10,
                       smoothing: float | None = None, alpha0=None) -> None:
    """Maximize f over A by ``α_{k+1} = p_A(α_k + step/(k+1) ∇f(α_k))`` (``alg:proj_grad``).

    As the authors' code: start at the projection of C/2 (``problem.initial_point()``) unless
    ``alpha0`` is given, step ``t/(k+1)`` with ``t = 5`` (their choice for the SVM; 10 for
    PerturbSVM), certificate every ``check_every`` iterations (:meth:`Run.check
    <indkernel.solvers.tracking.Run.check>`: the run's bound, escalated to the tight one where that
    could end the run). On an unbounded set (the squared
    hinge's cone) the steps are projected onto its part that holds every maximizer
    (:meth:`FeasibleSet.project_within_reach <indkernel.core.feasible_set.FeasibleSet.project_within_reach>`):
    the step ``t/(k+1)`` with the full gradient otherwise throws the iterates to 1e20 and beyond
    (a kernel scaled by 100), where even their projection is not feasible to round-off; on a
    bounded set this is the projection onto A.

    Parameters
    ----------
    step : float, default 5.0
        The constant t of the step size; the paper notes it must be tuned per data set.
    check_every : int, default 10
    smoothing : float, optional
        Use the paper's smoothed gradient (:meth:`IndefiniteProblem.smoothed_gradient`, a full
        eigendecomposition per step) with this ε. With the exact gradient the smoothing changes
        nothing (the smoothed terms have zero coefficients), so the default is the exact
        gradient through the oracle.
    """
    step = check_positive_scalar(step, "step", "the constant t of the step size t/(k+1)")
    check_every = _positive_int(check_every, "check_every")
    if smoothing is not None:
        check_positive_scalar(smoothing, "smoothing", "the smoothing width ε of max(0, λ)")
    alpha = problem.initial_point() if alpha0 is None else problem.project(alpha0)
    if run.observe(alpha):
        return
    checked = True
    for k in run.iterations():
        gradient = problem.gradient_at(alpha) if smoothing is None else problem.smoothed_gradient(alpha, smoothing)
        alpha = problem.feasible.project_within_reach(alpha + step / (k + 1) * gradient)
        checked = (k + 1) % check_every == 0
        if checked and run.check(alpha):
            return
    if not checked:
        run.observe(alpha)  # the last iterate, where the run stopped between checks
