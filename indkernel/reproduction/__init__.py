"""The paper's reproduction: its tables (:mod:`~indkernel.reproduction.experiments`), the ablation,
the rules for new points, the ten-class USPS runs, the figures (:mod:`~indkernel.reproduction.reproduce`),
the split protocol and the measurements. The library never imports this package; ``indkernel tables``
and ``indkernel figures`` do.
"""
