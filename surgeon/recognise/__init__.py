"""Recognising a region by what it computes: prove its family from the ops, then identify it.

Two ways in. ``Recogniser`` is the short one: cut a region from an output back to a variable the
pattern names, prove it affine in it (``family="affine"``), identify it on probes, cache the
verdict by the region's structure (docs/recognising.md). The symbolic pipeline is the whole one,
for a region whose dims are symbols (the affine-grid pattern is built on it):

1. cut: ``cutting.cut_back`` (candidates by shape, the caller's known nodes, shape and int
   leaves), every cut under every mode in turn (``strategies``), verdicts kept by symbolic
   structure (``strategies.Verdicts``);
2. prove: ``affine_proof.prove_affine``, the abstract interpretation ``prove`` with one rule per op
   (``prove.TABLE``) from the region's leaves (``leaves``), past branches at size 1
   (``small_dims``), with facts proved above the cut (``exact``: elements every run holds);
3. identify: ``identification.Identification`` runs the region (``runner``) at dims that all
   differ (``symbols``), tied only where it needs them equal (``ties``), fed what ``sources``
   says (the variable, an affine map of it, constants fitted; probe matrices from ``matrices``;
   exact fits from ``fit``), with coefficients that follow the dims (``scaling``), and concludes
   how the output's dims follow the inputs' (``conclude``);
3b. identify for every size: ``symbolic`` evaluates the region's generic element exactly (dims,
   positions and the variable's elements as symbols; ``symbolic_rules``, ``algebra``) for the
   caller to compare with the form it identified (written by ``exact_forms``), as rational
   functions;
4. write: ``SizeWriter`` (``surgeon.rewrite.sizes``) reads sizes and coefficients off the
   model's own dims at run time.

May import: ``graph/``, ``rewrite/`` (the match context it serves), ``errors``.
"""

from ..graph.node import shape_range
from ..rewrite.sizes import DimOf, ElemOf, Fixed, Piece, SizeWriter, dim_piece
from .affine_proof import AffineProof, prove_affine
from .algebra import Poly, Ratio, differs
from .bounds import BRANCH
from .conclude import DimsVerdict, Outcome, Setting, conclude
from .cutting import Words, cut_back
from .elements import (AFFINE, BRANCHED, DIMS, KNOWN, NAMES, OTHER, Abstract, NotProved, branch_of, dims, known,
                       mark_branch, variable)
from .exact import fixed_elements
from .fit import AffineMap, fit_map, precision, scaled
from .identification import Identification
from .key import fingerprint, region_key
from .leaves import AT_LEAST_ONE, declared_lie, leaves, symbolic_key
from .matrices import KIND_COUNT, probe_matrices
from .prove import TABLE, Proof, evaluate_region, prove
from .recogniser import Recognised, Recogniser
from .region import DoesNotRun, Probe, Region, cut, probes, reads_only_shapes
from .runner import RegionRunner
from .scaling import DimScaling, measure
from .small_dims import combinations, prove_beyond_one
from .sources import Fed, Fitted, Mapped, collapsed, map_from_probes
from .strategies import Cuts, Verdicts, region_symbols, strategies
from .symbolic import NotExact, Sym, dim_of, dim_symbol, integers, region_leaves, to_ratio
from .symbolic import evaluate as evaluate_exactly
from .exact_forms import coefficients, mapped, named, where, without_noise
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
           "RegionRunner", "DimsVerdict", "Outcome", "Setting", "conclude",
           "Identification", "Cuts", "Verdicts", "region_symbols", "strategies", "Words", "cut_back",
           "AffineProof", "prove_affine", "Fed", "Fitted", "Mapped", "map_from_probes", "collapsed",
           "KIND_COUNT", "probe_matrices", "dim_piece", "Poly", "Ratio", "differs", "NotExact", "Sym", "dim_of",
           "dim_symbol", "integers", "region_leaves", "to_ratio", "evaluate_exactly", "coefficients", "mapped",
           "named", "where", "without_noise"]
