"""runtime/: running models, and only that. Models that hold custom ops run as onnxruntime
stages for the standard parts and the plugin set's reference kernels (or op libraries, or
OpenVINO with the plugins' extensions) for the custom nodes: which engine and device
(``engines.py``, ``device.py``), the plan and its steps (``schedule.py``, ``steps.py``,
``program.py``), the runners and sessions kept (``runners.py``, ``sessions.py``), the inputs
(``inputs.py``, ``feedfiles.py``), the outputs written (``outfiles.py``) and which ops
onnxruntime can run at all (``ortops.py``). What a run means (validation) is ``validate/``'s.

May import: ``io/``, ``graph/``, ``errors``, ``logs``, ``forksafe``, ``reportfields``; never
``rewrite/``, ``validate/``, ``deploy/`` or ``lint/``.
"""

from .inputs import DEFAULT_MAX_BYTES, DEFAULT_SEED, input_specs, random_inputs
from .program import Runner
from .runners import clear_cache, get_runner
from .run import run
from .sessions import sessions_created

__all__ = [
    "run", "Runner", "get_runner", "clear_cache", "random_inputs", "input_specs", "sessions_created",
    "DEFAULT_MAX_BYTES", "DEFAULT_SEED",
]
