"""The problem of the paper, composed: a machine and a penalty on the kernel.

Each problem is ``max_{α ∈ A} f(α)`` with ``f(α) = ℓ(α) + φ(u(α))``: the machine
(:mod:`indkernel.core.machines`) gives the feasible set ``A`` (a box cut by one hyperplane,
:mod:`indkernel.core.feasible_set`), the dual term ℓ (``eᵀα`` for the SVM), the linear map u
(``Yα`` for the SVM) and the loss of its primal; the penalty (:mod:`indkernel.core.penalties`) gives
the closed-form inner minimization φ over the kernel through the oracle
(:mod:`indkernel.core.proxy`). The objective, gradient, proxy kernel and the certificate
(:mod:`indkernel.core.certificate`) below serve every pair unchanged; ``SVMProblem`` and its
siblings are thin constructors of common pairs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from .._validation import check_positive_scalar, check_scale, check_vector, safe_norm
from . import certificate
from .curvature import RankOneCurvature, compiled_hessian
from .device_oracle import device_oracle
from .machines import Machine
from .namespace import checked_kernel
from .penalties import Mercer, Penalty
from .projection import read_only
from .proxy import ROUNDOFF_FACTOR, UNIT_ROUNDOFF, Oracle, ProxyPoint, RankOneProxy
from .rank_one import RankOnePoint, _eigen
from .threads import threads_for

#: libsvm's stopping tolerance and iteration cap in :meth:`IndefiniteProblem.libsvm_dual_coef`: the
#: cap only guards against cycling on a singular kernel, and a run that meets it says so.
LIBSVM_TOL, LIBSVM_MAX_ITER = 1e-8, 1_000_000
OBJECTIVE_FORMS = ("negative-part", "eigenvalue", "proxy")
#: Oracle points a problem keeps (the newest): after a line search that tried a point beyond the
#: one it accepts, the accepted point's oracle is still kept.
RECENT_POINTS = 2


@dataclass(frozen=True)
class RayModel:
    """A lower model ``m(t) = a·t - b·t² - c·t⁴ <= f(tx)`` of the objective along the ray from 0
    through a point x of A (:meth:`IndefiniteProblem.ray_model`): ℓ's linear part, the quadratic
    ``½uᵀK0u`` (and ℓ's own), and the quartic ``‖u‖⁴/(16ρ)``, all at x."""

    a: float
    b: float
    c: float

    def __call__(self, t: float) -> float:
        return self.a * t - self.b * t * t - self.c * t ** 4

    def maximizer(self) -> float:
        """The t in (0, 1] where m is largest; 1 where no t < 1 gains more than m's rounding over t = 1."""
        roots = np.roots([4 * self.c, 0.0, 2 * self.b, -self.a])  # m'(t) = a - 2bt - 4ct³
        candidates = [float(r.real) for r in roots if abs(r.imag) <= 1e-12 * abs(r) and 0 < r.real < 1]
        t = max(candidates, key=self, default=1.0)
        rounding = 8 * UNIT_ROUNDOFF * (abs(self.a) + abs(self.b) + abs(self.c))
        return t if self(t) > self(1.0) + rounding else 1.0


class IndefiniteProblem:
    """``max_{x ∈ A} ℓ(x) + min_{K ⪰ 0} [-½uᵀKu + penalty(K)]`` (``eq:kern_learn`` and its
    variants): a machine (:mod:`indkernel.core.machines`: the loss, its feasible set A, ℓ and the
    map u) composed with a penalty on the kernel (:mod:`indkernel.core.penalties`).

    Parameters
    ----------
    K0 : (n, n) array_like, the symmetric similarity matrix (indefinite allowed).
    machine : :class:`indkernel.core.machines.Machine` on n points.
    penalty : :class:`indkernel.core.penalties.Penalty` (Frobenius, Componentwise or Mercer).
    oracle : str or oracle, default "rank-one"
        How the proxy kernel is computed (:mod:`indkernel.core.proxy`): ``"rank-one"`` updates the
        fixed eigendecomposition of K0 in O(n²) per point; ``"eigh"`` decomposes afresh (O(n³)).

    Attributes
    ----------
    K0 : (n, n) array, the similarity matrix; ``n`` the number of samples.
    rho : float, the penalty ρ (1 for componentwise penalties, whose weights are in the oracle's kernel).
    dim : int, the number of optimization variables (n, or 2n for the SVR's split ``α = α⁺ - α⁻``).
    feasible : :class:`indkernel.core.feasible_set.FeasibleSet`, the set A.
    oracle : the proxy-kernel oracle (:mod:`indkernel.core.proxy`).

    With a componentwise penalty (``th:kstar_pen``, scale ``s = 1/√h``) the oracle works on
    ``diag(1/s) K0 diag(1/s)`` with ``ũ = s∘u``, and ``K* = diag(s) K̃* diag(s)``.

    Examples
    --------
    >>> from indkernel.core.machines import Hinge
    >>> from indkernel.core.penalties import Frobenius
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((20, 20))
    >>> y = np.where(np.arange(20) % 2, 1.0, -1.0)
    >>> p = IndefiniteProblem((A + A.T) / 2, Hinge(y, 10.0, None, 20), Frobenius(1.0))
    >>> p
    IndefiniteProblem(n=20, Hinge(n=20, C=10, classes=[-1.0, 1.0]), Frobenius(rho=1), K0: spectrum not computed yet)
    """

    K0: np.ndarray
    rho: float
    n: int
    dim: int

    def __init__(self, K0, machine: Machine, penalty: Penalty, *, oracle: str | Oracle = "rank-one"):
        if not isinstance(machine, Machine):
            raise TypeError(f"machine must be an indkernel.core.machines.Machine; got {machine!r}")
        if not isinstance(penalty, Penalty):
            raise TypeError(f"penalty must be an indkernel.core.penalties.Penalty (Frobenius, Componentwise, "
                            f"Mercer); got {penalty!r}")
        K0, like = checked_kernel(K0)  # another namespace's array: checked, and solved, on its device
        if K0.shape[0] != machine.n:
            raise ValueError(f"K0 is {K0.shape[0]}x{K0.shape[0]} but the machine has {machine.n} training points")
        self._compose_checked(K0, machine, penalty, oracle, like)

    def _compose_checked(self, K0: np.ndarray, machine: Machine, penalty: Penalty, oracle, like=None) -> None:
        """Build from a validated K0 (:func:`indkernel._validation.check_kernel`: the named problem
        types validate it before their machine, which needs its size, and call this directly);
        ``like``: K0 on the device of the caller's array of another namespace
        (:func:`indkernel.core.namespace.checked_kernel`), where the oracle goes (:func:`indkernel.core.device_oracle.device_oracle`), or None."""
        self.machine, self.penalty, self.feasible = machine, penalty, machine.feasible
        self.rho, self.n, self.dim = penalty.rho, K0.shape[0], machine.dim
        self._scale = penalty.scale
        scaled = K0 if self._scale is None else K0 / np.outer(self._scale, self._scale)
        self._check_scale(scaled)  # before any work (the Mercer check and the oracle are eigendecompositions)
        self.K0 = penalty.kernel(K0)
        self._oracle_K0 = scaled if self.K0 is K0 else self.K0  # the Mercer penalty clips (and has no scale)
        if like is not None:  # on the device, the validated K0 itself, or the oracle's kernel (scaled) copied there
            oracle = device_oracle(self._oracle_K0, like, penalty, oracle, copy=self._oracle_K0 is not K0)
        self.oracle = penalty.oracle(self._oracle_K0, oracle)
        self._recent_points: list[tuple[bytes, ProxyPoint]] = []  # (α's bytes, point), the newest last
        for array in (self.K0, self._oracle_K0):
            array.setflags(write=False)
        self._frozen = True

    def _check_scale(self, oracle_K0: np.ndarray) -> None:
        """Refuse a problem whose objective overflows (:func:`indkernel._validation.check_scale`) on
        the oracle's kernel."""
        feasible, penalty = self.feasible, self.penalty
        box_norm = safe_norm(feasible.extent)
        if self._scale is not None:
            box_norm *= float(np.max(self._scale))
        check_scale(oracle_K0, box_norm, self.rho, kernel=penalty.kernel_name,
                    box=self.machine.box_name + penalty.box_note, penalty=penalty.name)

    def __repr__(self) -> str:
        """The size, the machine, the penalty and K0's spectrum if it is known (never computed here)."""
        return f"{type(self).__name__}(n={self.n}, {self.machine!r}, {self.penalty!r}, {self._spectrum_summary()})"

    def _spectrum_summary(self) -> str:
        spectrum = vars(self.oracle).get("spectrum")
        if spectrum is None:
            return "K0: PSD" if isinstance(self.penalty, Mercer) else f"{self.penalty.kernel_name}: spectrum not computed yet"
        values = spectrum[0]
        return (f"{self.penalty.kernel_name}: {int(np.sum(values < 0))} of {values.size} eigenvalues negative, "
                f"in [{float(values.min()):.3g}, {float(values.max()):.3g}]")

    def __getstate__(self) -> dict:
        """Pickle without the kept oracle points (they hold closures) and the compiled objective (views
        of the oracle's arrays); they are recomputed on use."""
        state = {**self.__dict__, "_recent_points": []}
        state.pop("compiled_objective", None)
        state.pop("compiled_certificate", None)
        return state

    def __setattr__(self, name: str, value) -> None:
        # validated once: a changed rho or C would skip the checks and void the certificate (the
        # validated data are the public attributes set in __init__)
        if getattr(self, "_frozen", False) and not name.startswith("_") and name in vars(self):
            raise AttributeError(f"{type(self).__name__}.{name} is read-only once the problem is built (it was "
                                 f"validated then); build a new {type(self).__name__} with the new {name}")
        super().__setattr__(name, value)

    # ----- the solvers' protocol: unchecked, on the (dim,) float arrays the solvers make ---
    # (the public methods below check their argument once and call these)
    def oracle_u(self, alpha: np.ndarray) -> np.ndarray:
        """The vector ``u(α)`` of the rank-one update in the oracle's space (``s∘β``)."""
        beta = self.machine.u(alpha)
        return beta if self._scale is None else self._scale * beta

    def oracle_u_adjoint(self, g: np.ndarray) -> np.ndarray:
        """The adjoint of :meth:`oracle_u`: maps a gradient in u to a gradient in α."""
        return self.machine.u_adjoint(g if self._scale is None else self._scale * g)

    def _u_extent(self) -> np.ndarray:
        """The largest ``|u_i|`` over the box, in the oracle's space."""
        extent = self.machine.u_extent()
        return extent if self._scale is None else self._scale * extent

    def from_model(self, alpha: np.ndarray) -> np.ndarray:
        """Map the ``alpha`` variable of a ``formulations`` model to this problem's variables (onto A)."""
        return self.project(self.machine.from_model(alpha))

    def from_dual_coef(self, beta: np.ndarray) -> np.ndarray:
        """The α (onto A) whose :meth:`dual_coef` is β (``Yβ`` for the SVM, β for one-class)."""
        return self.project(self.machine.from_dual_coef(beta))

    def kernel_penalty(self, K: np.ndarray) -> float:
        """The penalty on a kernel K (``ρ‖K - K0‖²_F`` of ``eq:kern_learn``, or the componentwise
        one): a cut's offset in the exchange master ``eq:SIQCLP_master``."""
        return self.penalty.kernel_penalty(K, self.K0)

    def dual_coef(self, alpha) -> np.ndarray:
        """The coefficients β of the machine's decision function ``Σ_j β_j K*(x, x_j) + b``
        (``Yα`` for the SVM, α for SVR and one-class), an (n,) array."""
        return self.machine.u(check_vector(alpha, self.dim, "alpha"))

    def consistent_coef(self, alpha) -> np.ndarray:
        """The coefficients w of the consistent out-of-sample rule: a new point x is scored
        ``k0(x)ᵀw + b`` from its raw similarities ``k0(x)`` to the training points, an (n,) array.

        With ``A = K0 + uuᵀ/(4ρ) = Q diag(λ) Qᵀ`` at α and ``P = Q diag(λ⁺/λ) Qᵀ`` (the projector
        onto A's positive eigenspace), ``K* = A_+ = AP`` (``eq:kstar``): a training row of K* is the
        row of A times P. A new point has no dual variable, so its row of A is ``k0(x)`` and its
        row of K* is ``k0(x)ᵀP``; hence ``w = Pβ`` with β = :meth:`dual_coef`. On the training rows
        ``K*β = K0w + (βᵀPβ)β/(4ρ)``: the rule reproduces the fitted decisions but for that
        rank-one term, which only the training points carry. With componentwise penalties
        (``th:kstar_pen``, ``u = s∘β``) it is ``w = (P̃u)/s`` for the projector P̃ of the scaled
        problem. O(n²) from the oracle's factors (the rank-one update's eigenvectors), no new
        eigendecomposition of K0.
        """
        alpha = check_vector(alpha, self.dim, "alpha")
        point = self._point(alpha)
        w = point.project_positive(point.u)
        return w if self._scale is None else w / self._scale

    def curvature_estimate(self) -> float:
        """A rough scale of ``‖∇²f‖`` for initial step sizes (``‖K0‖₂ + ‖u(hi)‖²/(4ρ)``, in the
        oracle's space, times ``max(scale)²`` for the map α ↦ u = scale·Yα of componentwise penalties); the
        methods that use it correct it by backtracking (each certificate's allowance for a point off A uses it too)."""
        return self._curvature_estimate

    @cached_property
    def _curvature_estimate(self) -> float:
        u = self._u_extent()
        curvature = self.oracle.norm + float(u @ u) / (4 * self.rho)
        if self._scale is not None:
            curvature *= float(np.max(self._scale)) ** 2
        if self.machine.curvature is not None:  # ℓ's -½xᵀDx
            curvature += float(np.max(self.machine.curvature))
        return curvature + np.finfo(float).tiny

    # ----- the objective and its gradient ----------------------------------------------
    def point(self, alpha) -> ProxyPoint:
        """The oracle at α: ``K*(α)`` in factored form (``Ku``, products ``multiply(v)``, the
        consistent rule's projector ``project_positive``, ``kernel()``), in the oracle's space."""
        return self._point(check_vector(alpha, self.dim, "alpha"))

    def kept_point(self, alpha: np.ndarray) -> ProxyPoint | None:
        """The oracle's point at α if it is among the kept ones (the same bits: a cheaper test than
        np.array_equal's; -0.0 is a miss), else None."""
        key = alpha.tobytes()
        for kept, point in reversed(self._recent_points):
            if key == kept:
                return point
        return None

    def _point(self, alpha: np.ndarray) -> ProxyPoint:
        """The oracle at α; the last ``RECENT_POINTS`` points are kept, so objective, gradient
        and certificate at the same α share one eigendecomposition, also where a line search
        tried a point beyond the one it accepted."""
        point = self.kept_point(alpha)
        if point is None:
            point = self.oracle(self.oracle_u(alpha), self.rho)
            self._keep(alpha, point)
        return point

    def _keep(self, alpha: np.ndarray, point: ProxyPoint) -> None:
        """Keep the oracle's point at α (the newest of ``RECENT_POINTS``)."""
        self._recent_points = [*self._recent_points, (alpha.tobytes(), point)][-RECENT_POINTS:]

    def objective(self, alpha, form: str = "negative-part") -> float:
        """The concave objective ``f(α)`` of ``eq:kern_learn2`` / ``eq:kern_learn_eig``.

        At ``rho=np.inf`` (``K* = (K0)_+``) f drops the infinite constant ``ρ‖(K0)_-‖²_F``:
        ``ℓ(α) - ½uᵀ(K0)_+u``, and the two checking forms compute it from a fresh ``eigh`` of K0.

        Parameters
        ----------
        alpha : (n,) array
        form : str
            ``"negative-part"`` (default): ``ℓ(α) - ½uᵀK0u - ‖u‖⁴/(16ρ) + ρ‖A_-‖²_F`` with
            ``A = K0 + uuᵀ/(4ρ)``, through the oracle; it involves only the negative eigenvalues
            of A and never subtracts the large ``ρ‖K0‖²_F`` from anything (the docs' mathematics page).
            ``"eigenvalue"``: the paper's ``eq:kern_learn_eig`` term by term, from a full
            eigendecomposition of A. ``"proxy"``: ``ℓ(α) - ½uᵀK*u + ρ‖K* - K0‖²_F``
            (``eq:kern_learn2``). All three are equal; the last two are for checking.
        """
        alpha = check_vector(alpha, self.dim, "alpha")
        if form == "negative-part":
            return self.objective_at(alpha)
        if form not in OBJECTIVE_FORMS:
            raise ValueError(f"form must be one of {OBJECTIVE_FORMS}; got {form!r}")
        u = self.oracle_u(alpha)
        K0 = self._oracle_K0
        if self.rho == np.inf:
            lam, V = scipy.linalg.eigh(K0)
            return float(self.machine.dual_term(alpha) - 0.5 * np.maximum(lam, 0.0) @ (u @ V) ** 2)
        lam, V = scipy.linalg.eigh(K0 + np.outer(u, u) / (4 * self.rho))
        lam_plus = np.maximum(lam, 0.0)
        if form == "eigenvalue":
            K0_diag = np.sum(V * (K0 @ V), axis=0)  # v_iᵀ K0 v_i
            return float(self.machine.dual_term(alpha) - 0.5 * lam_plus @ (u @ V) ** 2 + self.rho * lam_plus @ lam_plus
                         - 2 * self.rho * K0_diag @ lam_plus + self.rho * np.sum(K0 * K0))
        K_star = (V * lam_plus) @ V.T
        return float(self.machine.dual_term(alpha) - 0.5 * u @ K_star @ u + self.rho * np.sum((K_star - K0) ** 2))

    def objective_at(self, alpha: np.ndarray) -> float:
        """:meth:`objective` unchecked (the solvers' protocol)."""
        return self.machine.dual_term(alpha) + self._point(alpha).value

    def gradient_at(self, alpha: np.ndarray) -> np.ndarray:
        """:meth:`gradient` unchecked (the solvers' protocol)."""
        return self.machine.dual_term_gradient(alpha) - self.oracle_u_adjoint(self._point(alpha).Ku)

    def hessian_at(self, alpha: np.ndarray) -> scipy.sparse.linalg.LinearOperator:
        """:meth:`hessian` unchecked (the solvers' protocol)."""
        matvec = self._hessian_product(self._point(alpha).curvature())
        return scipy.sparse.linalg.LinearOperator((self.dim, self.dim), matvec=lambda v: matvec(np.ravel(v)),
                                                  rmatvec=lambda v: matvec(np.ravel(v)), dtype=float)

    def hessian_product_at(self, alpha: np.ndarray):
        """The Hessian at α as Newton's direction takes it (:func:`indkernel.core.curvature.hessian_product`):
        the compiled form where the oracle and the machine have one (the rank-one oracle's
        :class:`indkernel.core.curvature.RankOneCurvature` and :meth:`Machine.u_map
        <indkernel.core.machines.Machine.u_map>`), else the product ``v ↦ ∇²f(α)v`` of (dim,) arrays."""
        curvature = self._point(alpha).curvature()
        if isinstance(curvature, RankOneCurvature) and self._compiled_map is not None:
            return compiled_hessian(curvature, *self._compiled_map)
        return self._hessian_product(curvature)

    def _hessian_product(self, curvature: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        """``v ↦ -Uᵀ J U v - Dv`` for the oracle's ``curvature`` (J) and ℓ's quadratic part D."""
        quadratic = self.machine.curvature

        def product(v: np.ndarray) -> np.ndarray:
            product = -self.oracle_u_adjoint(curvature(self.oracle_u(v)))
            return product if quadratic is None else product - quadratic * v

        return product

    @cached_property
    def _compiled_map(self) -> tuple | None:
        """``(rows, weights, n, quadratic)`` of :func:`indkernel.core.curvature.compiled_hessian`
        (the machine's map with the penalty's scale in the weights), or None where the machine has no
        :meth:`Machine.u_map <indkernel.core.machines.Machine.u_map>`."""
        found = self.machine.u_map()
        if found is None:
            return None
        rows, weights = found
        if self._scale is not None:
            weights = weights * self._scale[rows]
        quadratic = np.zeros(self.dim) if self.machine.curvature is None else self.machine.curvature
        # fresh writable arrays of fixed types: one compiled version for every problem
        return (np.array(rows, dtype=np.int64), np.array(weights, dtype=np.float64), self.n,
                np.array(quadratic, dtype=np.float64))

    @cached_property
    def compiled_objective(self) -> tuple | None:
        """The objective as data for compiled line searches (:mod:`indkernel.core.compiled_objective`):
        ``(d, V0, ρ, threads, rows, weights, n, D, c, a, b, lo, hi, noise factor, check tolerance)``
        (K0's spectrum, the map α ↦ u of :func:`indkernel.core.curvature.compiled_hessian`, ℓ's
        quadratic and linear parts, the feasible set, :meth:`objective_noise`'s factor, the rank-one
        check's tolerance), where the oracle is the rank-one update on this machine's CPU, ρ is finite and A is bounded;
        else None (the searches run by Python). Computes K0's spectrum if not yet done."""
        if type(self.oracle) is not RankOneProxy or self.rho == np.inf or self._compiled_map is None \
                or not self.feasible.is_bounded:
            return None
        d, V0 = self.oracle.spectrum
        rows, weights, n, quadratic = self._compiled_map
        linear = self.machine.linear_gradient(np.zeros(self.dim))  # (constant)
        feasible = self.feasible
        return (d, V0, float(self.rho), threads_for(n), rows, weights, n, quadratic,
                np.array(linear, dtype=np.float64), read_only(feasible.a), float(feasible.b),
                read_only(feasible.lo), read_only(feasible.hi), ROUNDOFF_FACTOR * np.sqrt(self.dim) * UNIT_ROUNDOFF,
                RankOneProxy.CHECK_TOL)

    @cached_property
    def compiled_certificate(self) -> tuple | None:
        """What the free certificate needs besides the compiled objective, as data for
        :func:`indkernel.core.certificate.free_certificate`: ``(‖K0‖_F, ‖K0‖₂, curvature estimate, the
        penalty's scale (ones without one), its largest entry, the machine's compiled loss, its offset
        shift)``; None where there is no compiled objective or the machine has no
        :attr:`Machine.compiled_loss <indkernel.core.machines.Machine.compiled_loss>`."""
        loss = self.machine.compiled_loss
        if self.compiled_objective is None or loss is None:
            return None
        scale = np.ones(self.n) if self._scale is None else np.array(self._scale, dtype=np.float64)
        return (float(self.oracle.frobenius), float(self.oracle.norm), float(self.curvature_estimate()), scale,
                float(np.max(scale)), loss, float(self.machine.offset_shift))

    def adopt(self, alpha: np.ndarray, record: tuple) -> None:
        """Keep the oracle's point at α from a compiled line search's ``record`` (:func:`indkernel.core.compiled_objective.trial_value`)
        as if the oracle had computed it here (:meth:`indkernel.core.proxy.RankOneProxy.adopt`)."""
        u, decomposition, z, use_negative, Ku, value, magnitude, backward = record
        found = RankOnePoint(_eigen(decomposition), z, bool(use_negative), Ku, float(value), float(magnitude),
                             float(backward))
        self._keep(alpha, self.oracle.adopt(u, self.rho, found))

    def objective_roundoff(self, alpha) -> float:
        """A bound on the round-off in ``objective(alpha)`` (the default form): the oracle's
        allowance and ``γ = ROUNDOFF_FACTOR·dim·u`` times the magnitude of the sums. The constant
        ``ρ‖(K0)_-‖²_F`` inside f limits it: differences of f below this are noise."""
        point = self._point(alpha)
        magnitude = self.machine.dual_term_magnitude(alpha) + abs(point.value) + point.value_error
        return certificate.objective_roundoff(self.dim, magnitude, point.value_error)

    def objective_noise(self, alpha) -> float:
        """The rounding a line search allows when it compares ``objective`` at two nearby points:
        ``ROUNDOFF_FACTOR·√dim·u`` times the magnitude of f's sums, the typical error of a sum of
        dim rounded terms (the eigh and rank-one oracles agree on such differences well within it:
        tests/test_solvers.py). Not :meth:`objective_roundoff`: that certified bound
        also holds the backward error of the eigendecomposition of K0, which moves f at nearby
        points alike, and where the constant ``ρ‖(K0)_-‖²_F`` is large it exceeds the gains of
        the last iterations, so a search allowing it accepts steps that lose."""
        point = self._point(alpha)
        uu = float(point.u @ point.u)
        magnitude = (self.machine.dual_term_magnitude(alpha) + abs(point.value)
                     + point.uK0u_magnitude + uu * (uu / (8 * self.rho)))
        return ROUNDOFF_FACTOR * np.sqrt(self.dim) * UNIT_ROUNDOFF * magnitude

    def gradient(self, alpha) -> np.ndarray:
        """The exact gradient ``∇f(α) = ∇ℓ(α) - uᵀ(K*(α) u)`` (Danskin; f is C¹, the docs' mathematics page)."""
        return self.gradient_at(check_vector(alpha, self.dim, "alpha"))

    def hessian(self, alpha) -> scipy.sparse.linalg.LinearOperator:
        """``∇²f(α)`` as a (dim, dim) operator: ``v ↦ -Uᵀ J U v`` with U the map α ↦ u and
        ``J = d(K*u)/du`` by the Daleckii–Krein divided differences of the eigenvalues of
        ``A = K0 + uuᵀ/(4ρ)`` (:class:`indkernel.core.curvature.DividedDifferences`).

        O(n²) per product (the rank-one oracle: two passes over V0 and two over the eigenvectors
        W of the update, formed here, O(n²); W lives as long as the operator). f is C¹ and its gradient is
        piecewise smooth: where an eigenvalue of A is 0 this is one element of the generalized
        Hessian. Negative semidefinite (f is concave).
        """
        return self.hessian_at(check_vector(alpha, self.dim, "alpha"))

    def smoothed_gradient(self, alpha, epsilon: float) -> np.ndarray:
        """The paper's gradient (section "Algorithms"): differentiate ``eq:kern_learn_eig`` term by
        term, with ``max(0, λ)`` replaced by its smoothing ``φ_ε(λ) = max_{0<=w<=1} wλ - εw²/2``
        (derivative ``w*(λ) = clip(λ/ε, 0, 1)``) where it multiplies ``∂λ_i/∂α``, as the authors'
        code does. Costs a full eigendecomposition.

        With the exact inner minimizer the coefficient of every ``∂λ_i/∂α`` vanishes:
        ``-½(uᵀv_i)² + 2ρλ_i - 2ρ v_iᵀK0v_i = 0`` because ``v_iᵀK0v_i = λ_i - (uᵀv_i)²/(4ρ)``.
        So the smoothing changes nothing, and this equals :meth:`gradient` up to round-off; it is
        kept to reproduce the paper's method, not because the exact gradient needs it.
        """
        alpha = check_vector(alpha, self.dim, "alpha")
        if not epsilon > 0:
            raise ValueError(f"epsilon must be > 0 (the smoothing width of max(0, λ)); got {epsilon!r}")
        sigma = 1 / (4 * self.rho)
        u = self.oracle_u(alpha)
        lam, V = scipy.linalg.eigh(self._oracle_K0 + sigma * np.outer(u, u))
        lam_plus, projections = np.maximum(lam, 0.0), u @ V
        K0_diag = lam - sigma * projections ** 2  # v_iᵀ K0 v_i
        K_star_u = V @ (lam_plus * projections)
        gradient = self.machine.dual_term_gradient(alpha) - self.oracle_u_adjoint(K_star_u)
        if sigma == 0:  # ρ = ∞: the eigenvalues do not move with α
            return gradient
        weights = np.clip(lam / epsilon, 0.0, 1.0)  # dφ_ε/dλ at each eigenvalue
        coefficients = weights * (-0.5 * projections ** 2 + 2 * self.rho * lam_plus - 2 * self.rho * K0_diag)
        d_lambda_du = 2 * sigma * V * projections  # column i: ∂λ_i/∂u
        return gradient + self.oracle_u_adjoint(d_lambda_du @ coefficients)

    def proxy_kernel(self, alpha) -> np.ndarray:
        """The optimal PSD kernel ``K*(α) = (K0 + uuᵀ/(4ρ))_+`` (``eq:kstar``), an (n, n) array."""
        alpha = check_vector(alpha, self.dim, "alpha")
        K = self._point(alpha).kernel()
        return K if self._scale is None else K * np.outer(self._scale, self._scale)

    # ----- the feasible set (checked arguments; the solvers use ``feasible`` directly) ----
    def project(self, x) -> np.ndarray:
        """The exact Euclidean projection of ``x`` onto the feasible set ``A``; O(n log n)."""
        return self.feasible.project(check_vector(x, self.dim, "x"))

    def rescaled(self, alpha, upper) -> np.ndarray:
        """A point of the same kind of set with upper bounds ``upper`` (another C or ν; the
        ``feasible.reach`` of its problem), scaled coordinate by coordinate by the ratio of this
        set's reach to those and projected onto
        ``A``: the warm start of a path of C and ρ (a coordinate whose old bound is 0 is scaled to 0)."""
        hi = self.feasible.reach
        ratio = np.divide(hi, upper, out=np.zeros_like(hi, dtype=float), where=np.asarray(upper) > 0)
        return self.project(check_vector(alpha, self.dim, "alpha") * ratio)

    def initial_point(self) -> np.ndarray:
        """The machine's start: the projection of the box's midpoint onto ``A`` (``C/2`` for the
        SVM, where the paper's code starts; ``α⁺ = α⁻ = 0`` for the SVR, the same u with no common
        part, :meth:`EpsilonInsensitive.start <indkernel.core.machines.EpsilonInsensitive.start>`). For the squared hinge, whose set is an unbounded cone,
        that point scaled to the maximizer of f's lower model along its ray (:meth:`ray_model`):
        at C = 1e4 the unscaled start has f = -1e18, and a round-off allowance of that size."""
        x = self.machine.start()
        model = None if self.machine.curvature is None else self.ray_model(x)
        return x if model is None else x * model.maximizer()

    def ray_model(self, x: np.ndarray) -> RayModel | None:
        """The lower model of f along the ray from 0 through the feasible x:
        ``f(tx) >= a·t - b·t² - c·t⁴`` with ``a = ℓ's linear part at x``, ``b = ½xᵀDx + ½uᵀK0u``
        and ``c = ‖u‖⁴/(16ρ)`` (the negative-part form of f with ``ρ‖A_-‖² >= 0`` dropped), u = u(x);
        None where ρ = ∞ or A does not hold ``t·x`` for t in (0, 1] (``aᵀx = b ≠ 0``, or a lower
        bound above 0: the one-class set)."""
        feasible = self.feasible
        if self.rho == np.inf or feasible.b != 0 or np.any(feasible.lo > 0):
            return None
        u = self.oracle_u(x)
        b = 0.5 * float(u @ (self._oracle_K0 @ u))
        if self.machine.curvature is not None:
            b += 0.5 * float(self.machine.curvature @ (x * x))
        return RayModel(self.machine.linear(x), b, float(u @ u) ** 2 / (16 * self.rho))

    def only_point(self) -> np.ndarray | None:
        """The feasible point when ``A`` is a single point (the one-class set at ν = 1: α = e/n),
        else None; the methods that need an interior (ACCPM, the conic models) are then skipped."""
        return self.feasible.only_point()

    def feasibility_violation(self, alpha) -> float:
        """How far α is from ``A``: the largest bound or equality violation, relative to the box."""
        return self.feasible.violation(check_vector(alpha, self.dim, "alpha"))

    # ----- the certificate --------------------------------------------------------------
    def certify_iterate(self, alpha: np.ndarray, bound: str, target: float,
                        budget: Callable[[], float] | None = None,
                        start: np.ndarray | None = None) -> certificate.Certificate:
        """:meth:`certify` at a solver's own feasible iterate, unchecked, its bound solved no further
        than ``target`` above ``f(α)`` (the gap that would end the run), within the seconds
        ``budget()`` leaves (a run's time limit), going on from the dual point ``start`` of the
        run's previous bound (``Certificate.dual_point``): the solvers' entry. The free bound at a
        new point is compiled code's where the problem has a compiled form
        (:func:`indkernel.core.certificate.compiled_free_bound`)."""
        if bound == "free":
            compiled = certificate.compiled_free_bound(self, alpha)
            if compiled is not None:
                return compiled
        return certificate.certify(self, alpha, bound=bound, target=target, budget=budget, start=start)

    def certify(self, alpha, *, bound: str = "tight") -> certificate.Certificate:
        """Certified bounds ``lower <= p* <= upper`` at a feasible α (the docs' mathematics page), valid in
        floating point.

        With ``K = K*(α)``, weak duality of the machine with kernel K gives, for any β,
        ``p* <= P_K(β) + ρ‖K - K0‖²_F`` where ``P_K`` is the primal (regularizer plus loss at
        the exactly optimal offset); ``f(α) = D_K(α) + ρ‖K - K0‖²_F`` with ``D_K`` the dual. So
        ``upper = φ(u) + ½uᵀK*u + ½βᵀK*β + loss(K*β)`` (:meth:`upper_bound`), computed without
        ``ℓ(α)`` (no ``lower + gap`` that would cancel when ``ℓ(α)`` is huge). ``β = u(α)`` gives
        the free bound, tight only near the optimum. ``bound="tight"`` (default) solves the machine on
        the fixed kernel ``K*(α)`` (the paper's stopping criterion, the natural bound
        ``U*(α) = max_{α'∈A} L(α', K*(α))``) by Newton–CG rounds of O(n²) products with K* in factored
        form, warm-started at α, then where needed libsvm and an interior-point method on the formed
        K* (:mod:`indkernel.core.fixed_kernel`), and scores each of its points by the primal, until the dual side proves the gap within ``TIGHTNESS`` (1.25) of
        the exact natural gap (``Certificate.natural_gap_floor``): tight at *any* feasible α.
        ``bound="refined"`` is a few such rounds (cheaper, good near the optimum); ``"free"``
        only ``β = u(α)``.

        **In floating point** each bound is widened by a bound on its round-off: the oracle's
        (:func:`indkernel.core.proxy.roundoff_allowances`), ``γ = ROUNDOFF_FACTOR·n·u`` times the
        magnitude of every sum, and, for the lower bound, ``‖∇f‖`` times the distance of α to the
        hyperplane and the box (f is concave, so that is what a point off A can gain); the upper bound holds
        for any β, feasible or not. ``Certificate.scale = |ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)`` is the
        α-dependent size of the objective, against which the solvers measure a relative gap: it
        leaves out the constant ``ρ‖(K0)₋‖²_F`` of φ, and ``uᵀ|K0|u`` (the kernel's eigenvalues
        in absolute value) keeps it from vanishing where ``K*`` is nearly 0 along u. Nothing else
        stands in for it: where it is 0 (at α = 0, say) or below the round-off of the constant
        (ρ = 1e15), a relative gap is within tolerance only if the bracket is exact, and a solver
        ends "roundoff" (pass ``absolute=True``), never "optimal" with a gap the size of the
        objective's moving part.

        Raises
        ------
        ValueError
            If α is not in the feasible set (up to round-off); pass ``problem.project(alpha)``.
        """
        alpha = check_vector(alpha, self.dim, "alpha")
        if bound not in certificate.BOUNDS:
            raise ValueError(f"bound must be one of {certificate.BOUNDS} (cheapest first); got {bound!r}")
        return certificate.certify(self, alpha, bound=bound)

    def libsvm_dual_coef(self, alpha, *, tol: float = LIBSVM_TOL, max_iter: int = LIBSVM_MAX_ITER) -> np.ndarray:
        """β of libsvm's machine on ``K*(α)`` (as :meth:`dual_coef`) at libsvm's stopping tolerance
        ``tol``; forms K*, O(n³). The independent cross-check of the certificate.

        ``max_iter`` (-1: no cap) only guards against cycling; where libsvm stops at it, a
        ConvergenceWarning says so (its β still gives a valid bound, not the machine's optimum)."""
        alpha = check_vector(alpha, self.dim, "alpha")
        tol = check_positive_scalar(tol, "tol", "libsvm's stopping tolerance")
        if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or not (max_iter == -1 or max_iter > 0):
            raise ValueError(f"max_iter must be a positive integer or -1 (no cap); got {max_iter!r}")
        beta, capped = self.machine.libsvm_beta(self.proxy_kernel(alpha), tol, int(max_iter))
        if capped:
            from sklearn.exceptions import ConvergenceWarning

            warnings.warn(f"libsvm stopped at max_iter={max_iter} before its tolerance tol={tol:g}: its β gives a "
                          "valid bound, not the machine's optimum (raise max_iter, or -1 for no cap)", ConvergenceWarning, stacklevel=2)
        return beta

    def upper_bound(self, alpha, beta) -> float:
        """The certified upper bound on ``p*`` from any primal point β (the coefficients of a
        decision function ``K*(α)β + b``, as :meth:`dual_coef`) at any α:
        ``φ(u) + ½uᵀK*u + ½βᵀK*β + loss(K*β)`` plus its round-off allowance (:meth:`certify`).
        A solver of the machine on ``K*(α)`` (libsvm, a QP) supplies β; O(n²)."""
        alpha = check_vector(alpha, self.dim, "alpha")  # the bound needs no feasibility of α
        v = check_vector(beta, self.n, "beta")
        if self._scale is not None:
            v = v * self._scale
        point = self._point(alpha)
        upper, error, _ = certificate.primal_bound(self, point, v, point.multiply(v),
                                                   point.product_error * float(np.linalg.norm(v)))
        return float(upper + error)
