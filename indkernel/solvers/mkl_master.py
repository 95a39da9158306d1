"""The exchange method's master ``eq:SIQCLP_master`` as regularized multiple kernel learning.

The master ``max_{α ∈ A} min_i q_i(α)`` over cuts ``q_i(α) = ℓ(α) - ½uᵀK_iu + c_i`` (PSD kernels
``K_i``, ``c_i`` their penalty ``ρ‖K_i - K0‖²_F``) is, by the minimax theorem, the problem in the
kernel weights ``λ`` on the simplex Δ::

    min_{λ ∈ Δ} J(λ),   J(λ) = max_{α ∈ A} ℓ(α) - ½uᵀ(Σ_i λ_i K_i)u + λᵀc,

an SVM on the combined kernel for each λ: the regularized MKL problem of Chen & Ye (2008), the
route the paper suggests instead of a conic solver (section "Exchange method for SIQCLP"). The
weights are the master's multipliers on the cuts.

Solved by cutting planes in λ (Kelley): every α_j of an inner solve (libsvm, as the
certificate's cross-check) gives ``J(λ) >= λᵀQ_j`` with ``Q_j = (q_i(α_j))_i``, whatever the
inner solver's accuracy. The linear program ``min_λ max_j λᵀQ_j`` gives the next λ, and its
multipliers μ the point ``α̂ = Σ_j μ_j α_j`` of A with ``min_i q_i(α̂) >=`` the LP's value (each
q_i is concave). The master's optimum lies between ``min_i q_i(α̂)`` and the least inner value
``min_j λ_jᵀQ_j``. Each step costs one libsvm solve and O(mn²) products; the points stay from one
master to the next, a new kernel adding one entry to each Q_j, so later masters start warm.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

from ..core.problem import LIBSVM_TOL

#: libsvm's cap in the master's inner SVMs (it cycles on singular combined kernels; any iterate
#: serves the master, whose bounds the run certifies itself).
INNER_MAX_ITER = 100_000


class MKLMaster:
    """The cutting-plane solver of the SIQCLP master for one problem (see the module docstring).

    Parameters
    ----------
    problem : IndefiniteProblem
    max_points : int, default 50
        Inner points kept at most (the least recently useful are dropped first).
    box : float, default 0.25
        The first half-width of the box around the best kernel weights (boxstep, Marsten et al. 1975).
    """

    def __init__(self, problem, *, max_points: int = 50, box: float = 0.25):
        self.problem = problem
        self.max_points, self.box = max_points, box
        self.kernels: list[np.ndarray] = []
        self.offsets = np.zeros(0)
        self._alphas: list[np.ndarray] = []
        self._linear = np.zeros(0)           # ℓ(α_j)
        self._U = np.zeros((problem.n, 0))  # β(α_j) = dual_coef, one column per point
        self._Q = np.zeros((0, 0))          # q_i(α_j), one row per point
        self._used = np.zeros(0, dtype=int)  # the master at which each point last had weight

    def set_kernels(self, keep: list[int], new: np.ndarray) -> None:
        """Keep the kernels at the indices ``keep`` and add the PSD kernel ``new``."""
        self.kernels = [self.kernels[i] for i in keep] + [new]
        self.offsets = np.append(self.offsets[keep], self.problem.kernel_penalty(new))
        self._Q = np.column_stack([self._Q[:, keep], self._cut(len(self.kernels) - 1, self._U, self._linear)])

    def _cut(self, i: int, U: np.ndarray, linear: np.ndarray) -> np.ndarray:
        """``q_i`` at the points with β-columns U (``uᵀK_iu = βᵀK_iβ``, the kernels in the
        original space) and linear parts ``linear``."""
        return linear - 0.5 * np.einsum("jk,jk->k", U, self.kernels[i] @ U) + self.offsets[i]

    def solve(self, tol: float, max_steps: int, stop=lambda: False) -> tuple[float, np.ndarray, np.ndarray]:
        """``(t, α̂, λ)``: the master's value (the least inner value, an upper estimate), its point
        and the kernel weights, once ``t - min_i q_i(α̂) <= tol`` (absolute), after ``max_steps``
        inner solves, or when ``stop()`` says so."""
        m = len(self.kernels)
        weights = np.full(m, 1.0 / m)
        upper, best = np.inf, None
        center, box = weights, self.box
        for _ in range(max_steps):
            value = self._add_point(weights)
            if value < upper:  # a serious step: the box moves to the new weights and grows
                upper, center, box = value, weights, min(2 * box, 1.0)
            else:  # a null step: the box shrinks around the best weights
                box = max(box / 2, 1e-6)
            solved = self._linear_program(center, box)
            if solved is None:  # HiGHS gave up on nearly parallel cuts: the master ends at its best point
                if best is None:
                    best = (float(np.min(self._cuts_at(self._alphas[-1]))), self._alphas[-1])
                break
            weights, mu = solved
            self._used[mu > 0] = self._used.max(initial=0) + 1
            alpha = self.problem.feasible.project(np.tensordot(mu, np.array(self._alphas), axes=1))
            lower = float(np.min(self._cuts_at(alpha)))
            if best is None or lower > best[0]:
                best = (lower, alpha)
            if upper - best[0] <= tol or stop():
                break
        self._forget()
        assert best is not None
        return upper, best[1], weights

    def _add_point(self, weights: np.ndarray) -> float:
        """Solve the inner SVM at λ = weights, store its point; its value ``λᵀQ_j``."""
        combined = sum(w * K for w, K in zip(weights, self.kernels, strict=True) if w > 0)
        alpha = self.problem.from_dual_coef(self.problem.machine.libsvm_beta(combined, LIBSVM_TOL, INNER_MAX_ITER)[0])
        row = self._cuts_at(alpha)
        self._alphas.append(alpha)
        self._U = np.column_stack([self._U, self.problem.dual_coef(alpha)])
        self._linear = np.append(self._linear, self.problem.machine.dual_term(alpha))
        self._Q = np.vstack([self._Q, row]) if self._Q.size else row[None, :]
        self._used = np.append(self._used, self._used.max(initial=0) + 1)
        return float(weights @ row)

    def _cuts_at(self, alpha: np.ndarray) -> np.ndarray:
        """Every cut ``q_i`` at α."""
        u, linear = self.problem.dual_coef(alpha), self.problem.machine.dual_term(alpha)
        return np.array([self._cut(i, u[:, None], np.array([linear]))[0] for i in range(len(self.kernels))])

    def _linear_program(self, center: np.ndarray, box: float) -> tuple[np.ndarray, np.ndarray] | None:
        """``(λ, μ)``: ``min_{λ ∈ Δ, s} s`` subject to ``Q_jλ <= s`` and ``|λ - center|_∞ <= box``
        (the boxstep stabilization of Kelley's method; HiGHS), and its multipliers; None if HiGHS
        fails. Q is shifted and scaled to [-1, 0] first (on the simplex that changes neither)."""
        k, m = self._Q.shape
        Q = self._Q - self._Q.max()
        Q /= max(-float(Q.min()), np.finfo(float).tiny)
        bounds = [(max(c - box, 0.0), min(c + box, 1.0)) for c in center] + [(None, None)]
        result = scipy.optimize.linprog(
            np.append(np.zeros(m), 1.0), A_ub=np.column_stack([Q, -np.ones(k)]), b_ub=np.zeros(k),
            A_eq=np.append(np.ones(m), 0.0)[None, :], b_eq=[1.0], bounds=bounds, method="highs")
        if result.status != 0:
            return None
        mu = np.maximum(-result.ineqlin.marginals, 0.0)
        return np.maximum(result.x[:m], 0.0), mu / mu.sum()

    def _forget(self) -> None:
        """Keep at most ``max_points`` points, the most recently useful."""
        if len(self._alphas) <= self.max_points:
            return
        keep = np.sort(np.argsort(-self._used, kind="stable")[:self.max_points])
        self._alphas = [self._alphas[j] for j in keep]
        self._U, self._linear, self._Q, self._used = self._U[:, keep], self._linear[keep], self._Q[keep], self._used[keep]
