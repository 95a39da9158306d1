"""Models of the binary indefinite SVM (``eq:kern_learn``) and of the plain SVM dual."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ._base import Formulation


def _box_parameter(C, n: int) -> cp.Parameter:
    C_param = cp.Parameter(n, nonneg=True, name="C")
    C_param.value = np.broadcast_to(np.asarray(C, dtype=float), (n,)).copy()
    return C_param


def maxmin_sdp(K0, y, C, rho) -> Formulation:
    """The max-min problem ``eq:kern_learn`` in eigenvalue form (``eq:kern_learn_eig``) as an SDP.

    maximize ``eᵀα + ρ‖K0‖²_F - ρ‖P‖²_F`` over ``α ∈ A`` and ``P ⪰ 0`` with
    ``[[P - K0, Yα], [(Yα)ᵀ, 4ρ]] ⪰ 0``, i.e. ``P ⪰ K0 + (Yα)(Yα)ᵀ/(4ρ)`` by a Schur complement;
    since ``min{‖P‖_F : P ⪰ 0, P ⪰ X} = ‖X_+‖_F`` its optimum is the paper's ``p*``.

    Parameters
    ----------
    K0 : (n, n) symmetric array; y : (n,) array of ±1; C : float or (n,) array; rho : float > 0.

    Returns
    -------
    Formulation with variables ``alpha`` (n,), ``P`` (n, n) and parameters ``C``, ``rho``.
    """
    K0, y = np.asarray(K0, dtype=float), np.asarray(y, dtype=float)
    n = K0.shape[0]
    C_param = _box_parameter(C, n)
    rho_param = cp.Parameter(nonneg=True, name="rho", value=float(rho))
    alpha = cp.Variable(n, name="alpha")
    P = cp.Variable((n, n), symmetric=True, name="P")
    u = cp.reshape(cp.multiply(y, alpha), (n, 1), order="F")
    schur = cp.bmat([[P - K0, u], [u.T, cp.reshape(4 * rho_param, (1, 1), order="F")]])
    constraints = [y @ alpha == 0, alpha >= 0, alpha <= C_param, P >> 0, schur >> 0]
    objective = cp.Maximize(cp.sum(alpha) + rho_param * (np.sum(K0 * K0) - cp.sum_squares(P)))
    return Formulation(cp.Problem(objective, constraints), {"alpha": alpha, "P": P},
                       {"C": C_param, "rho": rho_param})


def dual_qp(K, y, C) -> Formulation:
    """The SVM dual ``ω_C(K) = max_{α ∈ A} eᵀα - ½(Yα)ᵀK(Yα)`` (``eq:gen_perf_meas``) for a PSD K.

    K enters through the factor ``L = V_+ diag(λ_+)^{1/2}`` of its positive eigenpairs
    (``K = LLᵀ``), so the model stays valid when K is singular; eigenvalues below
    ``1e-12 λ_max`` count as zero.

    Returns
    -------
    Formulation with variable ``alpha`` (n,) and parameter ``C``.
    """
    K, y = np.asarray(K, dtype=float), np.asarray(y, dtype=float)
    n = K.shape[0]
    lam, V = np.linalg.eigh((K + K.T) / 2)
    keep = lam > 1e-12 * max(lam.max(), 0.0)
    L = V[:, keep] * np.sqrt(lam[keep])
    C_param = _box_parameter(C, n)
    alpha = cp.Variable(n, name="alpha")
    objective = cp.Maximize(cp.sum(alpha) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, alpha)))
    constraints = [y @ alpha == 0, alpha >= 0, alpha <= C_param]
    return Formulation(cp.Problem(objective, constraints), {"alpha": alpha}, {"C": C_param})
