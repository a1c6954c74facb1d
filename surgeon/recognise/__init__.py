"""Recognising a region by what it computes: prove its family from the ops, then identify it.

``prove`` is an abstract interpretation with one rule per op (``prove.TABLE``): it tells, element
by element, what is constant, shape-derived, affine in the region's variables (and which of
their elements it reads) or neither, and refuses branches on sizes that a probe could not see.
"""

from .elements import (AFFINE, BRANCHED, DIMS, KNOWN, NAMES, OTHER, Abstract, NotProved, branch_of, dims, known,
                       mark_branch, variable)
from .prove import TABLE, Proof, prove

__all__ = ["prove", "Proof", "Abstract", "NotProved", "TABLE", "KNOWN", "DIMS", "AFFINE", "OTHER", "BRANCHED",
           "NAMES", "known", "dims", "variable", "mark_branch", "branch_of"]
