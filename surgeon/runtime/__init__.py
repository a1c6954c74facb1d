"""Run models that hold custom ops: onnxruntime for the standard parts, the plugin set's
reference kernels for the custom nodes (no compiled op library needed)."""

from .inputs import DEFAULT_MAX_BYTES, DEFAULT_SEED, input_specs, random_inputs
from .program import Runner
from .runners import clear_cache, get_runner
from .run import run
from .sessions import sessions_created

__all__ = [
    "run", "Runner", "get_runner", "clear_cache", "random_inputs", "input_specs", "sessions_created",
    "DEFAULT_MAX_BYTES", "DEFAULT_SEED",
]
