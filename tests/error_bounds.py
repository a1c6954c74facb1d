"""How far two correct floating-point computations of one quantity may lie apart: the tolerance
of every comparison with torch or onnxruntime, derived from the computation, not guessed.

Two right implementations still round differently: another summation order, FMA on one side
(torch's AVX2 and AVX-512 kernels contract, its generic path does not), another way to build
the base grid. Neither may exceed the forward error bound of the computation itself, so each
side lies within it of the exact value and the two within twice it:

- a sum of n terms, in any order, with or without FMA, is off by at most gamma(n) times the sum
  of the terms' magnitudes, gamma(n) = n u / (1 - n u), u the unit roundoff (Higham, Accuracy
  and Stability of Numerical Algorithms, 2nd ed., Lemma 3.1 and section 3.1). For long sums
  (n > 64) the probabilistic bound lambda sqrt(n) u is used instead, lambda = 8: it holds with
  probability at least 1 - 2n exp(-lambda^2 / 2) (Higham and Mary, SIAM J. Sci. Comput. 41(5),
  2019, Theorem 2.4), over 1 - 1e-9 for every sum in this suite;
- a sampler moves a coordinate error into its output through the interpolation weights'
  slopes (Lipschitz constants below, taken from the weight functions themselves) and
  contributes the rounding of its weights and of its sum of taps;
- where the computed function jumps (nearest's pick at a half-pixel, the slope of linear
  interpolation at a whole pixel), an output within one coordinate error of the jump may take
  either side: it is allowed the jump, and no other output is.

So the helpers take the operands (theta, x, the upstream gradient), not results that may
cancel, and return a bound per element. Bit-exact comparisons stay only where both sides are
specified to be exact (a copy, nearest's pick away from ties, our kernels against their own
single-rounding reference)."""

from __future__ import annotations

import math

import numpy as np

LAMBDA = 8.0  # the probabilistic bound's lambda (see above)
_U = {np.dtype(np.float64): 2.0 ** -53, np.dtype(np.float32): 2.0 ** -24, np.dtype(np.float16): 2.0 ** -11}
BFLOAT16_U = 2.0 ** -8

# Per mode and spatial dim, from the 1-D weight functions (linear: w = 1 - |t|; cubic: Keys' with
# A = -0.75, torch's and the contract's), each a maximum over the fractional position:
# TAPS per dim, SUM_W = max sum |w|, SLOPE = max sum |w'|, CURVE = max sum |w''| (linear: 0 away
# from whole pixels, where its slope jumps: JUMPS says so), W_ROUND = sum over taps of the
# magnitudes Horner's evaluation of each weight adds (linear: 1 - t, two terms; cubic: up to
# 3 |A| t^3 + ... with t below 2, 36 at the far taps), in units of gamma(2 * degree).
_MODES = {
    "nearest": dict(taps=1, sum_w=1.0, slope=0.0, curve=0.0, w_round=0.0, degree=0),
    "bilinear": dict(taps=2, sum_w=1.0, slope=2.0, curve=0.0, w_round=2.0, degree=1),
    "bicubic": dict(taps=4, sum_w=1.375, slope=3.0, curve=12.0, w_round=2 * 4.5 + 2 * 36.0, degree=3),
}


def unit_roundoff(dtype) -> float:
    """u of a float type (numpy or torch dtype, or its name)."""
    name = str(dtype).replace("torch.", "")
    if name == "bfloat16":
        return BFLOAT16_U
    return _U[np.dtype(dtype if isinstance(dtype, type) else name)]


def gamma(n: int, dtype) -> float:
    """The relative error bound of a sum of ``n`` terms in ``dtype`` (module docstring)."""
    u = unit_roundoff(dtype)
    if n > 64:
        return LAMBDA * math.sqrt(n) * u
    assert n * u < 1
    return n * u / (1 - n * u)


def sum_bound(magnitude, n: int, dtype):
    """Two computations of a sum of ``n`` terms whose magnitudes add up to ``magnitude``."""
    return 2 * gamma(n, dtype) * np.asarray(magnitude, np.float64)


def affine_grid_bound(theta, dtype=np.float32) -> np.ndarray:
    """[N, k] per item and grid coordinate: two computations of ``affine_grid(theta)``. Each
    coordinate sums k + 1 products of a theta element with a base coordinate of magnitude <= 1,
    itself computed with up to three roundings."""
    theta = np.abs(np.asarray(theta, np.float64))
    k = theta.shape[1]
    return 2 * (gamma(k + 1, dtype) + 3 * unit_roundoff(dtype)) * theta.sum(axis=2)


def _base(n: int, align_corners: bool) -> np.ndarray:
    if n == 1:
        return np.zeros(1)
    coords = np.linspace(-1.0, 1.0, n)
    return coords if align_corners else coords * (n - 1) / n


def _unnormalise(grid, sizes, align_corners):
    """Source pixel coordinates of normalised ones, a non-finite one read as -1 (the contract's
    and onnxruntime's reading, exact on both sides)."""
    grid = np.where(np.isfinite(grid), grid, -1.0)
    return (grid + 1) / 2 * (sizes - 1) if align_corners else ((grid + 1) * sizes - 1) / 2


def _own_error(pos, sizes, padding, dtype):
    """The unnormalisation's own roundings (three, on values as large as the coordinate) and a
    reflection's (four more, on values as large as the coordinate plus the size), in pixels."""
    u, mag = unit_roundoff(dtype), np.abs(pos) + 1
    return 4 * u * mag + (4 * u * (mag + sizes) if padding == "reflection" else 0.0)


def coordinate_error(theta, in_spatial, out_spatial, align_corners, padding="zeros", dtype=np.float32):
    """(error bound, exact position): [N, *out, k] each, in pixels, grid order (x first), of
    two computations of each source coordinate of ``affine_grid(theta)``: the grid's error
    scaled by the unnormalisation, plus the coordinate's own roundings. ``in_spatial`` is
    (H, W) or (D, H, W)."""
    theta = np.asarray(theta, np.float64)
    sizes = np.array(list(reversed(in_spatial)), np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        grid = np.einsum("...j,nij->n...i", _bases(out_spatial, align_corners), theta)
        finite = np.isfinite(grid)
        grid_err = affine_grid_bound(np.where(np.isfinite(theta), theta, 0), dtype)  # [N, k]
    pos = _unnormalise(grid, sizes, align_corners)
    scale = (sizes - 1) / 2 if align_corners else sizes / 2
    grid_err = grid_err.reshape(grid_err.shape[0], *([1] * len(out_spatial)), grid_err.shape[1])
    return np.where(finite, grid_err * scale, 0.0) + _own_error(pos, sizes, padding, dtype), pos


def _bases(out_spatial, align_corners) -> np.ndarray:
    """[*out, k + 1] the base coordinates each output multiplies theta by (x first, then 1)."""
    mesh = np.meshgrid(*[_base(n, align_corners) for n in out_spatial], indexing="ij")
    return np.stack(list(reversed(mesh)) + [np.ones(mesh[0].shape)], axis=-1)


def _setup(x, theta, out_spatial, mode, padding, align_corners, dtype):
    x = np.asarray(x, np.float64)
    n = x.shape[0]
    theta = np.broadcast_to(np.asarray(theta, np.float64), (n, *np.shape(theta)[1:]))
    err, pos = coordinate_error(theta, x.shape[2:], out_spatial, align_corners, padding, dtype)
    peak = np.abs(x).reshape(n, x.shape[1], -1).max(axis=2)  # [N, C]
    return x, theta, err, pos, peak, _MODES[mode], x.ndim - 2


def _weight_rounding(m, nsp, dtype) -> float:
    """Two computations of one output's weights, summed over its taps, per unit of input."""
    other = m["sum_w"] ** (nsp - 1)
    return nsp * other * 2 * gamma(2 * m["degree"], dtype) * m["w_round"] if m["degree"] else 0.0


def grid_sample_bound(x, theta, out_spatial, mode, padding, align_corners, dtype=np.float32) -> np.ndarray:
    """[N, C, *out] bound on two computations of ``grid_sample(x, affine_grid(theta))``; theta's
    batch may be 1 (broadcast)."""
    x, theta, err, pos, peak, m, nsp = _setup(x, theta, out_spatial, mode, padding, align_corners, dtype)
    return _sample_bound(err, pos, peak, mode, dtype)


def sampled_grid_bound(x, grid, mode, padding, align_corners, dtype=np.float32) -> np.ndarray:
    """[N, C, *out] bound on two computations of ``grid_sample(x, grid)`` for one given grid:
    only the unnormalisation and the sampling round."""
    x, grid = np.asarray(x, np.float64), np.asarray(grid, np.float64)
    sizes = np.array(list(reversed(x.shape[2:])), np.float64)
    pos = _unnormalise(grid, sizes, align_corners)
    err = _own_error(pos, sizes, padding, dtype)
    peak = np.abs(x).reshape(x.shape[0], x.shape[1], -1).max(axis=2)
    return _sample_bound(err, pos, peak, mode, dtype)


def warp_bound(x, theta, out_spatial, mode=None, padding=None, align_corners=None, dtype=np.float32) -> np.ndarray:
    """``grid_sample_bound`` for a model that warps ``x`` by ``theta``: where the test does not
    say a mode, padding or align_corners, the largest bound over its choices."""
    modes = [mode] if mode else (["bilinear", "nearest", "bicubic"] if np.ndim(x) == 4 else ["bilinear", "nearest"])
    bounds = [grid_sample_bound(x, theta, out_spatial, m, p, ac, dtype)
              for m in modes for p in ([padding] if padding else ["zeros", "reflection"])
              for ac in ([align_corners] if align_corners is not None else [False, True])]
    return np.maximum.reduce(bounds)


def _sample_bound(err, pos, peak, mode, dtype) -> np.ndarray:
    """Coordinate errors move the output by the weights' slope, the weights and the sum of taps
    round, and outputs at nearest's ties may take either pixel."""
    m, nsp = _MODES[mode], pos.shape[-1]
    other = m["sum_w"] ** (nsp - 1)
    per_unit = (m["slope"] * other * err.sum(axis=-1) + _weight_rounding(m, nsp, dtype)
                + sum_bound(m["sum_w"] ** nsp, m["taps"] ** nsp + 2 * nsp, dtype) + 4 * unit_roundoff(dtype))
    if mode == "nearest":
        per_unit = per_unit + np.where(_near(pos, err, (0.5,)), 2.0, 0.0)
    return per_unit[:, None] * peak.reshape(*peak.shape, *([1] * nsp))


def _near(pos, err, offsets) -> np.ndarray:
    """[N, *out] outputs within one coordinate error of a point where the function or its slope
    jumps: ``pos - offset`` whole, for an offset of 0 (a whole pixel) or 0.5 (a half pixel)."""
    hit = np.zeros(pos.shape[:-1], bool)
    for offset in offsets:
        shifted = pos - offset
        hit |= (np.abs(shifted - np.round(shifted)) <= err).any(axis=-1)
    return hit


def _fold(c, size: int, align_corners: bool):
    """torch's reflection of coordinates (floats or whole taps) into the image."""
    low, span = (0.0, size - 1.0) if align_corners else (-0.5, float(size))
    if span <= 0:
        return np.zeros_like(c, dtype=np.float64)
    c = np.abs(c - low)
    flips, extra = np.floor(c / span), np.fmod(c, span)
    return np.where(flips % 2 == 0, extra + low, span - extra + low)


def _footprints(pos, in_spatial, mode, padding, align_corners):
    """For each output, every input element it can read under either side's rounding: the taps
    around its exact position (reflected as the sampler reflects them) widened by one each way,
    clamped into the image (clamping only adds elements). Yields [N, O] flat input indices."""
    start, width = {"nearest": (-1, 4), "bilinear": (-1, 4), "bicubic": (-2, 6)}[mode]
    n, k = pos.shape[0], pos.shape[-1]
    sizes = list(reversed(in_spatial))  # grid order
    reflect = padding == "reflection"
    coords = [pos[..., d].reshape(n, -1) for d in range(k)]
    if reflect and mode != "bicubic":  # the coordinate is reflected, then its taps taken
        coords = [_fold(c, sizes[d], align_corners) for d, c in enumerate(coords)]
    lows = [np.floor(c).astype(np.int64) + start for c in coords]
    for offsets in np.ndindex(*([width] * k)):
        flat = np.zeros_like(lows[0])
        for d in reversed(range(k)):  # the last grid coordinate is the slowest input dim
            taps = lows[d] + offsets[d]
            if reflect and mode == "bicubic":  # each tap is reflected
                taps = np.round(_fold(taps.astype(np.float64), sizes[d], align_corners)).astype(np.int64)
            flat = flat * sizes[d] + np.clip(taps, 0, sizes[d] - 1)
        yield flat


def _scatter(per_output, pos, in_spatial, mode, padding, align_corners) -> np.ndarray:
    """[N, C, *in]: each input element's sum of ``per_output`` [N, C, O] over the outputs whose
    footprint holds it."""
    n, c = per_output.shape[:2]
    cells = int(np.prod(in_spatial))
    rows = (np.arange(n * c).reshape(n, c, 1) * cells)
    total = np.zeros(n * c * cells)
    for flat in _footprints(pos, in_spatial, mode, padding, align_corners):
        index = rows + flat[:, None, :]
        total += np.bincount(index.ravel(), weights=per_output.ravel(), minlength=total.size)
    return total.reshape(n, c, *in_spatial)


def grid_sample_grad_bounds(x, theta, upstream, out_spatial, mode, padding, align_corners, dtype=np.float32):
    """(bound on x's gradient [N, C, *in], bound on theta's [N, k, k + 1]) of two computations
    of the backward pass of ``grid_sample(x, affine_grid(theta))`` for ``upstream``.

    x's gradient sums, per input element, weight * upstream over the outputs that read it: each
    weight is off by its slope times the coordinate error plus its own rounding, and the sum
    rounds (gamma of how many outputs read one element). theta's gradient sums over every
    output and channel the upstream times the output's slope along one coordinate times a base
    coordinate: the slope is off by the curvature times the coordinate error, and by its whole
    jump where the output sits on a kink (linear's whole pixels; a reflection's folds)."""
    x, theta, err, pos, peak, m, nsp = _setup(x, theta, out_spatial, mode, padding, align_corners, dtype)
    up = np.abs(np.asarray(upstream, np.float64)).reshape(x.shape[0], x.shape[1], -1)  # [N, C, O]
    in_spatial, how = x.shape[2:], (mode, padding, align_corners)
    one_slope = {"nearest": 0.0, "bilinear": 1.0, "bicubic": 1.35}[mode]  # max |w'| of one tap
    one_weight = 1.0
    flat_err = err.reshape(err.shape[0], -1, nsp).sum(axis=-1)  # [N, O]
    readers = _scatter(np.ones((x.shape[0], 1, flat_err.shape[1])), pos, in_spatial, *how).max()
    per_read = one_slope * flat_err[:, None] + _weight_rounding(m, nsp, dtype) + 2 * gamma(int(readers), dtype) * one_weight
    if mode == "nearest":  # at a tie the pick moves: both elements may get the whole upstream
        per_read = per_read + np.where(_near(pos, err, (0.5,)), 1.0, 0.0).reshape(x.shape[0], 1, -1)
    bound_x = _scatter(up * per_read, pos, in_spatial, *how)

    k = nsp
    sizes = np.array(list(reversed(in_spatial)), np.float64)
    scale = (sizes - 1) / 2 if align_corners else sizes / 2  # d coordinate / d grid
    other = m["sum_w"] ** (nsp - 1)
    slope = m["slope"] * other  # |d output / d coordinate| per unit of input
    bases = np.abs(_bases(out_spatial, align_corners)).reshape(-1, k + 1)  # [O, k + 1]
    load = np.einsum("nco,nc->no", up, peak)  # [N, O]: sum over channels of |upstream| * peak
    # linear's slope jumps at whole pixels, and where a reflected coordinate folds (half pixels
    # too); cubic's weights have continuous slopes, and it reflects or clamps its taps, not the
    # coordinate
    kinks = {"nearest": (), "bilinear": (0.0, 0.5) if padding == "reflection" else (0.0,), "bicubic": ()}[mode]
    bound_t = np.zeros(theta.shape)
    if mode == "nearest":
        return bound_x, bound_t  # no slope: theta's gradient is zero on both sides
    n_terms = bases.shape[0] * x.shape[1] * m["taps"] ** nsp
    for i in range(k):
        off = (m["curve"] * other * err[..., i] + (m["slope"] * m["slope"] * m["sum_w"] ** max(0, nsp - 2)
               * (err.sum(axis=-1) - err[..., i]))).reshape(x.shape[0], -1)
        off = off + _weight_rounding(m, nsp, dtype) * m["slope"]
        if kinks:
            off = off + np.where(_near(pos[..., i:i + 1], err[..., i:i + 1], kinks), 2 * slope, 0.0).reshape(x.shape[0], -1)
        per_output = scale[i] * load * off  # [N, O]
        magnitude = scale[i] * load * slope
        bound_t[:, i] = per_output @ bases + sum_bound(magnitude @ bases, n_terms, dtype)
    return bound_x, bound_t


def assert_warp_outputs(got, want, feeds: dict, theta=None, what: str = "", fused=None, **how) -> None:
    """A warp model's output against another computation of it: the image is the feeds' array
    of rank 4 or 5; theta, unless given, the feeds' [N, k, k + 1] one (or the first k rows of a
    homogeneous [N, k + 1, k + 1], or flat rows [N, k (k + 1)]), else the constant the ``fused``
    model's custom node reads; a mode, padding or align_corners not given in ``how`` takes the
    largest bound over its choices (``warp_bound``)."""
    arrays = [np.asarray(v) for v in feeds.values() if np.asarray(v).dtype.kind == "f"]
    x = max((a for a in arrays if a.ndim in (4, 5)), key=np.size)
    k = x.ndim - 2
    if theta is None:
        found = [a for a in arrays if a.ndim == 3 and a.shape[1:] in ((k, k + 1), (k + 1, k + 1))] or \
            [a.reshape(-1, k, k + 1) for a in arrays if a.ndim == 2 and a.shape[1] == k * (k + 1)]
        theta = found[0] if len(found) == 1 else _fused_theta(fused)
    theta = np.asarray(theta)[:, :k]
    bound = warp_bound(x, theta, np.shape(got)[2:], dtype=x.dtype if x.dtype != np.float64 else np.float32, **how)
    assert_within(got, want, bound, what)


def _fused_theta(model) -> np.ndarray:
    """The constant theta a fused model's one custom node reads (an initializer or a Constant,
    through an Expand of its batch or a Cast)."""
    from onnx import numpy_helper

    assert model is not None, "theta is neither fed nor given: pass theta= or fused="
    inits = {i.name: i for i in model.graph.initializer}
    producers = {o: n for n in model.graph.node for o in n.output}
    node, = [n for n in model.graph.node if n.domain == "custom.ops"]
    name = node.input[1]
    while name not in inits and producers[name].op_type in ("Expand", "Cast", "Identity"):
        name = producers[name].input[0]
    if name in inits:
        return numpy_helper.to_array(inits[name])
    return numpy_helper.to_array(producers[name].attribute[0].t)


def assert_within(got, want, bound, what: str = "") -> None:
    """|got - want| <= bound element by element (NaN where both are NaN agrees); the message
    names the worst element and how far past its bound it is."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    bound = np.broadcast_to(np.asarray(bound, np.float64), got.shape)
    assert got.shape == want.shape, f"{what}: shapes {got.shape} and {want.shape}"
    diff = np.abs(got - want)
    ok = (diff <= bound) | (np.isnan(got) & np.isnan(want))
    if not ok.all():
        idx = np.unravel_index(np.argmax(np.where(ok, -np.inf, np.nan_to_num(diff / bound, nan=np.inf))), got.shape)
        raise AssertionError(f"{what}: {int((~ok).sum())} of {ok.size} elements past their bound; worst at "
                             f"{tuple(int(i) for i in idx)}: {got[idx]!r} vs {want[idx]!r}, "
                             f"difference {diff[idx]:.3g} > bound {bound[idx]:.3g}")


def fused_output_bounds(fused, feeds: dict) -> dict:
    """{graph output: bound} for each output of a fused model that one of its custom nodes
    writes: the node's own inputs (image, theta) are read off a run of the model, and its
    attributes give the mode, padding and align_corners. Outputs written by other ops are left
    out: the caller says what holds them."""
    import copy

    import surgeon
    from onnx import helper

    nodes = {n.output[0]: n for n in fused.graph.node if n.domain == "custom.ops"}
    mine = [o.name for o in fused.graph.output if o.name in nodes]
    if not mine:
        return {}
    probe = copy.deepcopy(fused)
    wanted = {name for o in mine for name in nodes[o].input[:2] if name}
    known = {o.name for o in probe.graph.output}
    probe.graph.output.extend(helper.make_empty_tensor_value_info(n) for n in sorted(wanted - known))
    names = {i.name for i in probe.graph.input}
    values = surgeon.run(probe, {k: v for k, v in feeds.items() if k in names})
    bounds = {}
    for out in mine:
        node = nodes[out]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        ac = bool(attrs.get("align_corners", 0))
        if node.op_type == "AffineGrid":
            theta = np.asarray(values[node.input[0]], np.float64)
            bound = affine_grid_bound(theta, values[out].dtype if values[out].dtype != np.float64 else np.float32)
            bounds[out] = bound.reshape(bound.shape[0], *[1] * (bound.shape[1]), bound.shape[1])
            continue
        x, theta = values[node.input[0]], values[node.input[1]]
        mode = {"linear": "bilinear", "cubic": "bicubic"}.get(_text(attrs.get("mode", "bilinear")),
                                                            _text(attrs.get("mode", "bilinear")))
        padding = _text(attrs.get("padding_mode", "zeros"))
        bound = grid_sample_bound(x.astype(np.float32), theta.astype(np.float32), values[out].shape[2:], mode,
                                  padding, ac)
        if x.dtype == np.float16:  # computed in float32, rounded once to float16
            bound = bound + unit_roundoff(np.float16) * np.abs(values[out].astype(np.float64))
        bounds[out] = bound
    return bounds


def _text(value):
    return value.decode() if isinstance(value, bytes) else value
