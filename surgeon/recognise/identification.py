"""Identifying a cut region whose dims are symbols: prove it once, at the first dims it runs at,
then identify what it computes there, with every dim class apart first and tied only where the
region does not run apart; ties split again where splitting holds (``ties``); coefficients that
follow the dims measured (``scaling``) and checked with every group varied at once; the output's
dims concluded (``conclude``).

A subclass says what the region is: ``fed(assign)`` (the variable the proof's run is fed),
``prove(feeds, values, bounds)`` (the proof there, or a ``Refusal``; ``proved(proof)`` may refuse
more), ``first(base)`` (after the proof: the first identification at these dims),
``check(assign, settings, salt, nan_free=False)`` (one run held to what was identified) and
``concluded(base, outcome)`` (the verdict). A proof's refusal ends the identification
(``NotProved``: no other dims can change what the ops compute)."""

from __future__ import annotations

import numpy as np

from ..errors import SurgeonError
from ..rewrite.match import Refusal
from .bounds import BRANCH
from .conclude import Outcome
from .elements import NotProved
from .leaves import AT_LEAST_ONE
from .prove import evaluate_region
from .region import DoesNotRun
from .small_dims import prove_beyond_one
from .symbols import DimPlan
from .ties import Failure, partitions, search, size_hints, split

SHARED_SESSION_ELEMENTS = 1 << 16  # regions this small probe with the proof's session (every value out)


class Identification:
    noun = "output"  # what the region computes, in reasons
    anchor_noun = "anchor"  # the tensor whose batch the output must have
    holds = "the output is identified"  # what a split tie must keep holding

    def __init__(self, ctx, cut, symbols, runner):
        self.ctx, self.cut, self.symbols, self.runner = ctx, cut, symbols, runner
        self.dims = DimPlan(symbols, [[c] for c in range(len(symbols.classes))])
        self.proof = None  # proved once, at the first dims the region runs at

    # -- the subclass's ---------------------------------------------------------------------------

    def fed(self, assign: dict) -> np.ndarray | None:
        return None

    def prove(self, feeds: dict, values: dict, bounds=lambda group: AT_LEAST_ONE):
        raise NotImplementedError

    def proved(self, proof) -> None:
        """Refuse more than the proof does (raise ``NotProved``)."""

    def first(self, base: dict) -> Outcome | Failure:
        raise NotImplementedError

    def check(self, assign: dict, settings, salt: int = 0, nan_free: bool = False) -> Outcome | Failure:
        raise NotImplementedError

    def concluded(self, base: dict, outcome: Outcome):
        raise NotImplementedError

    # -- the proof ----------------------------------------------------------------------------------

    def _does_not_run(self, exc) -> Failure:
        return Failure(f"the region does not run on probe dims: {exc}", ran=False)

    def prove_once(self, base: dict) -> Failure | None:
        """Prove the region at the first dims it runs at (and where the anchor's batch is the
        output's: elsewhere the consumer would refuse, so they are not the model's)."""
        if self.proof is not None:
            return None
        try:
            feeds, _ = self.runner.inputs(base, self.fed(base))
            values = evaluate_region(self.ctx, self.cut.nodes, feeds)  # one run: the output and all it takes
        except (DoesNotRun, SurgeonError) as exc:
            return self._does_not_run(exc)
        output = self.cut.output
        out = np.asarray(values[output] if output in values else self.ctx.constant(output))
        if sum(np.size(v) for v in values.values()) <= SHARED_SESSION_ELEMENTS:
            self.runner.share_session_with_proof(feeds, values)
        batch = self.symbols.concrete(self.symbols.anchor, base)[0]
        if out.ndim and out.shape[0] != batch:
            return Failure(f"the {self.noun}'s batch {out.shape[0]} is not the {self.anchor_noun}'s ({batch}) at "
                           "these dims", ran=False, batch=out.shape[0])
        try:
            proof = self.prove(feeds, values)
        except DoesNotRun as exc:
            return self._does_not_run(exc)
        if isinstance(proof, Refusal) and BRANCH in proof.reason:  # settled but at size 1?
            proof = prove_beyond_one(self.dims, base, proof, self.prove_at)
        if isinstance(proof, Refusal):
            raise NotProved(proof.reason)
        self.proved(proof)
        self.proof = proof
        return None

    def prove_at(self, assign: dict, bounds):
        """The proof at these dims with each group's dims in ``bounds(group)``; None where the
        region does not run."""
        try:
            feeds, _ = self.runner.inputs(assign, self.fed(assign))
            return self.prove(feeds, evaluate_region(self.ctx, self.cut.nodes, feeds), bounds)
        except (SurgeonError, DoesNotRun):
            return None

    def start(self, base: dict) -> Outcome | Failure:
        return self.prove_once(base) or self.first(base)

    # -- coefficients that follow the dims (scaling.measure) -------------------------------------

    def all_varied(self, base: dict, setting) -> Failure | None:
        """Every group varied at once (each was varied alone before), so a sum of powers is not
        taken for their product."""
        assign, used = dict(base), set(base.values())
        for g in range(len(self.dims.groups)):
            if set(self.dims.groups[g]) & self.dims.batch_like:
                continue
            value = self.dims.fresh(g, used | {self.dims.far(base)})
            used.add(value)
            assign = self.dims.with_value(assign, g, value)
        result = self.check(assign, (setting,), salt=7)
        return result if isinstance(result, Failure) else None

    # -- the whole identification ---------------------------------------------------------------

    def identify(self):
        try:
            return self._identify()
        except NotProved as exc:
            return Refusal(str(exc))

    def _identify(self):
        failures, found = [], None
        for plan in partitions(self.symbols, self.ctx):  # every partition gets its turn
            self.dims = plan
            base = plan.base()
            result = self.start(base)
            if isinstance(result, Outcome):
                found = base, result
                break
            failures.append(result)
        if found is None and not any(f.ran for f in failures):
            hints = size_hints(self.ctx, self.cut.constants, self.cut.nodes, self.cut.output)
            found = search(self.dims, self.dims.base(), self.start, hints)
        if found is None:
            ran = [f for f in failures if f.ran]
            return Refusal((ran or failures)[0].reason)
        base, outcome = found
        if any(len(g) > 1 for g in self.dims.groups):
            setting = outcome.setting
            base = split(self.ctx, self.dims, base, lambda trial: self.check(trial, (setting,), salt=5), self.holds)
            if isinstance(base, Refusal):
                return base
            outcome = self.check(base, (setting,), salt=0)
            if not isinstance(outcome, Outcome):
                return Refusal(outcome.reason)
        return self.concluded(base, outcome)
