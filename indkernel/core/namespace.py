"""Arrays of any namespace of the Python array API standard (NumPy, torch, CuPy, ...): an array of
another namespace than NumPy's is worked on where it lives (:mod:`indkernel.core.device_oracle`), a
torch or CuPy array on a GPU there, whatever scikit-learn's ``array_api_dispatch`` says (that
setting also asks for ``SCIPY_ARRAY_API=1`` before scipy is imported, which the device route does
not need); lists and NumPy arrays are NumPy's.

``array-api-compat`` (the ``gpu`` extra) is imported only when such an array arrives.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np


def foreign_namespace(*arrays) -> ModuleType | None:
    """The array API namespace of ``arrays`` (array-api-compat's wrapper) when they are arrays of
    a namespace other than NumPy's, else None (NumPy arrays, lists, scalars, other objects).

    Raises
    ------
    ImportError
        If an array is of another namespace and array-api-compat is missing.
    """
    candidates = [a for a in arrays if a is not None and not isinstance(a, (np.ndarray, np.generic, list, tuple,
                                                                                  int, float))]
    if not candidates or not all(hasattr(a, "__array_namespace__") or _is_known_array(a) for a in candidates):
        return None
    try:
        import array_api_compat
    except ImportError as error:
        raise ImportError("solving on an array of another namespace than NumPy's needs array-api-compat: pip install "
                          "'indkernel[gpu]' (or pass a NumPy array)") from error
    xp = array_api_compat.array_namespace(*candidates)
    return None if array_api_compat.is_numpy_namespace(xp) else xp


def _is_known_array(a) -> bool:
    """A torch tensor or CuPy array (their namespaces are array-api-compat's wrappers)."""
    module = type(a).__module__
    return module.startswith("torch") or module.startswith("cupy")


def to_numpy(x) -> np.ndarray:
    """A NumPy copy (or view) of an array of any namespace, from any device."""
    if isinstance(x, np.ndarray):
        return x
    import array_api_compat

    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if array_api_compat.is_cupy_array(x):
        return x.get()
    return np.from_dlpack(x)  # array-api-strict and other arrays on the CPU


def device_of(x):
    """The device of an array of any namespace."""
    import array_api_compat

    return array_api_compat.device(x)


def on_host(K0):
    """``(K0 for the host's checks, the caller's array or None)``: an array of another namespace
    (:func:`foreign_namespace`) is copied to NumPy for the checks, and the caller's array is kept
    to say where the work goes (:func:`indkernel.core.device_oracle.device_oracle`)."""
    if foreign_namespace(K0) is None:
        return K0, None
    return to_numpy(K0), K0
