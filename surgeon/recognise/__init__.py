"""Recognising a region by what it computes: prove its family from the ops, then identify it.

``Recogniser`` is the facility a pattern uses: cut a region from an output back to a variable
the pattern names, prove it affine in it (``family="affine"``), identify it on probes, cache
the verdict by the region's structure (docs/recognising.md). ``prove`` is the abstract
interpretation underneath, with one rule per op (``prove.TABLE``): element by element, what is
constant, shape-derived, affine in the region's variables (and which of their elements it
reads) or neither, and which branches on sizes a probe could not see.

Around it, what any region whose dims are symbols needs: ``symbols`` (each dynamic dim a class of
its own, the dims plan a probe assigns, how a dim of the result is known), ``ties`` (dims tied
only where the region needs them equal), ``scaling`` (coefficients that follow the dims as powers
of d and d - 1), ``small_dims`` (branches on sizes settled for every size but 1, proved on both
sides) and ``leaves`` (a region's leaves for the proof at one probe's dims, its key with the dims
pattern, declared dims the data contradicts), ``exact`` (elements a value holds in every run,
proved above a cut: a homogeneous matrix's last row); and for the rewrite, ``SizeWriter`` with its size
pieces (``surgeon.rewrite.sizes``: sizes and coefficients read off the model's own dims).

May import: ``graph/``, ``rewrite/`` (the match context it serves), ``errors``.
"""

from ..graph.node import shape_range
from .affine_proof import AffineProof, prove_affine
from .bounds import BRANCH
from .elements import (AFFINE, BRANCHED, DIMS, KNOWN, NAMES, OTHER, Abstract, NotProved, branch_of, dims, known,
                       mark_branch, variable)
from .conclude import DimsVerdict, Outcome, Setting, conclude
from .exact import fixed_elements
from .cutting import Words, cut_back
from .identification import Identification
from .matrices import KIND_COUNT, probe_thetas
from .sources import Fed, Fitted, Mapped, map_from_probes
from .strategies import Cuts, Verdicts, region_symbols, strategies
from .fit import AffineMap, fit_map, precision, scaled
from .key import fingerprint, region_key
from .leaves import AT_LEAST_ONE, declared_lie, leaves, symbolic_key
from .prove import TABLE, Proof, evaluate_region, prove
from .recogniser import Recognised, Recogniser
from .runner import RegionRunner, Run, probe_failure
from .region import DoesNotRun, Probe, Region, cut, probes, reads_only_shapes
from .scaling import DimScaling, measure
from .small_dims import combinations, prove_beyond_one
from ..rewrite.sizes import DimOf, ElemOf, Fixed, Piece, SizeWriter
from .symbols import Computed, Dim, DimPlan, Follows, OutputDim, Static, Symbols
from .ties import Failure, partitions, pinned_elsewhere, runs, search, size_hints, split, tie_co_valued

__all__ = ["BRANCH", "prove", "Proof", "Abstract", "NotProved", "TABLE", "KNOWN", "DIMS", "AFFINE", "OTHER", "BRANCHED",
           "NAMES", "known", "dims", "variable", "mark_branch", "branch_of", "Recogniser", "Recognised", "Region",
           "DoesNotRun", "Probe", "cut", "probes", "region_key", "fingerprint", "reads_only_shapes",
           "evaluate_region", "shape_range", "Symbols", "Dim", "DimPlan", "Static", "Follows", "Computed",
           "OutputDim", "Fixed", "DimOf", "ElemOf", "Piece", "Failure", "partitions", "search", "size_hints", "split",
           "DimScaling", "measure", "combinations", "prove_beyond_one",
           "leaves", "symbolic_key", "declared_lie", "AT_LEAST_ONE", "runs", "tie_co_valued",
           "pinned_elsewhere", "SizeWriter", "fixed_elements", "AffineMap", "fit_map", "precision", "scaled",
           "RegionRunner", "Run", "probe_failure", "DimsVerdict", "Outcome", "Setting", "conclude",
           "Identification", "Cuts", "Verdicts", "region_symbols", "strategies", "Words", "cut_back", "AffineProof", "prove_affine",
           "Fed", "Fitted", "Mapped", "map_from_probes", "KIND_COUNT", "probe_thetas"]
