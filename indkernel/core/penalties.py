"""The penalties on the learned kernel: what keeps K near the similarity K0.

Each gives the inner minimization ``min_{K ⪰ 0} -½uᵀKu + penalty(K)`` its closed form through the
proxy oracle (:mod:`indkernel.core.proxy`), on a kernel the penalty may rescale first:

- :class:`Frobenius`: ``ρ‖K - K0‖²_F`` (``eq:kern_learn``), ``K* = (K0 + uuᵀ/(4ρ))_+``;
  ``ρ = inf`` is the limit ``K* = (K0)_+`` (``ss:interpretation``);
- :class:`Componentwise`: ``Σ_ij h_ih_j (K_ij - K0_ij)²`` (``eq:kern_learn_pen``, ``th:kstar_pen``),
  the Frobenius oracle at ρ = 1 on ``K0/(√h√hᵀ)`` with ``u`` scaled by ``1/√h``;
- :class:`Mercer`: ``ρ‖K - K0‖²_F`` for a PSD K0 (PerturbSVM, ``eq:learn-mercer``), where
  ``K* = K0 + uuᵀ/(4ρ)`` needs no eigendecomposition per point.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from .._validation import check_rho, check_vector
from .proxy import MercerProxy, make_oracle, psd_part


class Penalty(ABC):
    """A penalty on the learned kernel, and the oracle of its inner minimization.

    Attributes
    ----------
    rho : float, the ρ the oracle is called with.
    scale : None, or the vector s of a componentwise penalty (the oracle works on ``K0/(s sᵀ)``).
    """

    rho: float
    scale: np.ndarray | None = None
    #: the names :func:`indkernel._validation.check_scale` uses in its messages
    name, kernel_name, box_note = "rho", "K0", ""

    def kernel(self, K0: np.ndarray) -> np.ndarray:
        """The K0 the problem keeps (the Mercer penalty clips round-off)."""
        return K0

    def oracle(self, K0: np.ndarray, oracle):
        """The proxy oracle (by name, or a ready one) on the oracle's kernel ``K0/(s sᵀ)``."""
        return make_oracle(oracle, K0)

    @abstractmethod
    def kernel_penalty(self, K: np.ndarray, K0: np.ndarray) -> float:
        """The penalty of a kernel K (a cut's offset in the exchange master ``eq:SIQCLP_master``)."""

    def clipping_allowance(self, uu: float) -> float:
        """What the penalty's change of the caller's K0 adds to an upper bound at a point with
        ``‖u‖² = uu``, so that it bounds ``p*`` of the K0 given (0: the problem is solved on it)."""
        return 0.0

    def kernel_clipping_allowance(self, K: np.ndarray) -> float:
        """The same for an upper bound from any PSD kernel K (``indkernel.verify``'s references)."""
        return 0.0

    def model_spec(self, K0: np.ndarray) -> tuple[str, tuple]:
        """``(name, arguments)``: this penalty's entry in the cvxpy models on the problem's K0, the
        class ``formulations.penalties.<name>(*arguments)``, which :mod:`indkernel.solvers.models`
        composes with a machine's into each model of the paper. A penalty without one has no conic
        route (``NotImplementedError``)."""
        raise NotImplementedError(f"{type(self).__name__} has no cvxpy model: add its entry to formulations.penalties "
                                  "and name it in its model_spec() method")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rho={self.rho:g})"


class Frobenius(Penalty):
    """``ρ‖K - K0‖²_F`` (``eq:kern_learn``); ρ > 0 or ``inf``."""

    #: the class of :mod:`formulations.penalties` that models it
    model_entry = "Frobenius"

    def __init__(self, rho):
        self.rho = check_rho(rho, "the penalty on ||K - K0||_F^2 (eq:kern_learn)")

    def kernel_penalty(self, K, K0):
        """``ρ‖K - K0‖²_F``."""
        if self.rho == np.inf:
            raise ValueError("rho=inf fixes the kernel at (K0)_+: a kernel's penalty is infinite unless it is that one")
        return float(self.rho * np.sum((K - K0) ** 2))

    def model_spec(self, K0):
        if self.rho == np.inf:
            raise NotImplementedError("rho=inf fixes the kernel at (K0)_+: the conic models need a finite rho (the "
                                      "kernel is their variable)")
        return self.model_entry, (K0, self.rho)


class Componentwise(Penalty):
    """``Σ_ij h_ih_j (K_ij - K0_ij)²`` (``eq:kern_learn_pen`` with ``H = hhᵀ``); ``h = √ρ·e``
    recovers ``eq:kern_learn``. The oracle is the Frobenius one at ρ = 1 on ``K0/(s sᵀ)`` with
    ``s = 1/√h`` and ``u`` scaled by s (``th:kstar_pen``).

    Parameters
    ----------
    h : (n,) array_like of positive numbers, the penalty weight of each training point.
    n : int, the number of training points.
    """

    name, kernel_name, box_note = "h", "K0/(√h√hᵀ)", " and h"

    def __init__(self, h, n: int):
        if h is None:
            raise TypeError("h is required: one positive penalty weight per training point (H = hh^T)")
        self.h = check_vector(h, n, "h")
        if np.any(self.h <= 0):
            raise ValueError(f"h must be positive; h[{int(np.argmin(self.h))}] = {self.h.min():.3g}")
        self.rho, self.scale = 1.0, 1.0 / np.sqrt(self.h)

    def __repr__(self) -> str:
        return f"Componentwise(h=[{float(self.h.min()):g}, {float(self.h.max()):g}])"

    def kernel_penalty(self, K, K0):
        """``Σ_jk h_jh_k (K - K0)²_jk`` (``eq:kern_learn_pen``)."""
        return float(np.sum(np.outer(self.h, self.h) * (K - K0) ** 2))

    def model_spec(self, K0):
        return "Componentwise", (K0, self.h)


class Mercer(Frobenius):
    """``ρ‖K - K0‖²_F`` on a Mercer (PSD) K0: PerturbSVM (``eq:learn-mercer``), with the oracle
    :class:`indkernel.core.proxy.MercerProxy`. K0 is checked once (its eigenvalues): negative
    eigenvalues above ``-PSD_TOL·‖K0‖₂`` are round-off and are clipped, so K0 becomes ``(K0)_+``.

    Parameters
    ----------
    rho : float > 0.
    oracle : None, or the MercerProxy of another problem on the same K0 (the one-vs-rest problems
        of a multiclass fit share its check).
    """

    model_entry = "Mercer"

    def __init__(self, rho, oracle: MercerProxy | None = None):
        super().__init__(rho)
        self._shared = oracle

    def kernel(self, K0):
        if self._shared is None:
            self._shared = MercerProxy(*psd_part(K0))
        elif not (isinstance(self._shared, MercerProxy) and self._shared.K0.shape == K0.shape):
            raise TypeError(f"oracle must be None or the MercerProxy of this K0 (shape {K0.shape}); got {self._shared!r}")
        return self._shared.K0

    def oracle(self, K0, oracle):
        return self._shared

    def clipping_allowance(self, uu):
        """What clipping K0's small negative eigenvalues adds to an upper bound
        (:meth:`indkernel.core.proxy.MercerProxy.clipping_allowance`)."""
        return 0.0 if self._shared is None else self._shared.clipping_allowance(uu, self.rho)

    def kernel_clipping_allowance(self, K: np.ndarray) -> float:
        """What clipping adds to an upper bound from any PSD kernel K: its penalty for the K0 given,
        ``ρ‖K - (K0)_+ + N‖²_F``, exceeds the one for ``(K0)_+`` by at most
        ``2ρ‖K - (K0)_+‖_F‖N‖_F + ρ‖N‖²_F`` (0 for a PSD K0, and at ρ = ∞)."""
        if self._shared is None or self.rho == np.inf:
            return 0.0
        norm = self._shared.clipped[1]
        return 0.0 if norm == 0 else float(self.rho * norm * (2 * np.linalg.norm(K - self._shared.K0) + norm))
