"""The last resort of a run that did not converge: libsvm's machine on the proxy kernel ``K*(α)``.

The certificate's Newton refinement (:meth:`IndefiniteProblem.certify`) needs only O(n²)
products, but from a point far from the fixed-kernel optimum (a conic solver's α, a stalled
method) its few CG steps may not find the right active set. libsvm does, at the price of forming
``K*`` (O(n³)), so :class:`indkernel.tracking.Run` calls it once, after the loop, only for a run
that has not converged. The tests use it as the independent cross-check of the refinement."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, SVR, OneClassSVM

from .one_class_problem import OneClassProblem
from .svr_problem import SVRProblem

#: libsvm's stopping tolerance and iteration cap (at tighter tolerances it sometimes cycles).
TOL, MAX_ITER = 1e-8, 100_000


def libsvm_quietly(estimator, *args, **kwargs):
    """Fit a scikit-learn libsvm estimator; its iteration cap may stop it early, which is fine
    here because any primal point gives a valid bound."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(*args, **kwargs)


def libsvm_dual_coef(problem, alpha) -> np.ndarray:
    """The coefficients β of libsvm's machine on ``K*(α)`` (as ``problem.dual_coef``)."""
    K = problem.proxy_kernel(alpha)
    beta = np.zeros(problem.n)
    if isinstance(problem, SVRProblem):
        model = libsvm_quietly(SVR(C=1.0, epsilon=problem.epsilon, kernel="precomputed", tol=TOL, max_iter=MAX_ITER),
                               K, problem.y, sample_weight=problem.C)  # its intercept takes the mean
        beta[model.support_] = model.dual_coef_[0]
    elif isinstance(problem, OneClassProblem):
        model = libsvm_quietly(OneClassSVM(nu=problem.nu, kernel="precomputed", tol=TOL, max_iter=MAX_ITER), K)
        beta[model.support_] = model.dual_coef_[0] / (problem.nu * problem.n)  # libsvm scales eᵀα to νn
    else:
        model = libsvm_quietly(SVC(C=1.0, kernel="precomputed", tol=TOL, max_iter=MAX_ITER),
                               K, problem.y, sample_weight=problem.C)  # libsvm's C_i = C * weight_i
        beta[model.support_] = model.dual_coef_[0]  # y_i α_i, sign +1 for classes_[1] = +1
    return beta
