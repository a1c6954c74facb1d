"""surgeon on lean machines: without torch every shipped sample fuses, inspects, runs and
validates; an install without the compiled libraries falls back to the numpy reference
kernels, with one notice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "samples" / "models"

# Makes `import torch` fail as on a machine where it is not installed.
NO_TORCH = textwrap.dedent("""
    import importlib.abc, sys

    class NoTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoTorch())
""")

# Makes the compiled libraries missing, as in a tree that was never built (installed.find is
# where every library is looked up).
NO_LIBRARIES = textwrap.dedent("""
    from surgeon_ops.kernels import installed

    def missing(package, stem, hint=installed.HOW_TO_BUILD):
        raise installed.LibraryNotInstalled(f"lib{stem}.so is not installed in {package} (test); {hint}")

    installed.find = missing
""")

EVERY_SAMPLE = NO_TORCH + NO_LIBRARIES + textwrap.dedent("""
    import json, sys
    import numpy as np
    import surgeon

    manifest = json.load(open(sys.argv[1]))
    rows = []
    for name, entry in sorted(manifest.items()):
        path = f"{sys.argv[2]}/{name}"
        shapes = entry["inputs"]
        feeds = dict(np.load(f"{sys.argv[3]}/{name}.npz"))
        report = surgeon.inspect(path, input_shapes=shapes)
        result = surgeon.fuse(path, input_shapes=shapes)
        outputs = surgeon.run(result.model, feeds)
        check = surgeon.validate(path, result.model, feeds)
        rows.append([name, len(report.rewrites), len(result.report.rewrites), sorted(outputs), check.passed])
    assert "torch" not in sys.modules
    print(json.dumps(rows))
""")


def _run(code: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=900)


def test_every_sample_without_torch_and_without_the_libraries(tmp_path):
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from samples.catalog import BY_FILE, make_inputs  # the samples' own well-formed inputs (sizes as data)

    for name, sample in BY_FILE.items():
        np.savez(tmp_path / f"{name}.npz", **make_inputs(sample))
    done = _run(EVERY_SAMPLE, str(MODELS / "manifest.json"), str(MODELS), str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    manifest = json.loads((MODELS / "manifest.json").read_text())
    assert len(rows) == len(manifest)
    import surgeon

    for name, inspected, fused, outputs, passed in rows:
        assert passed, name
        with_everything = surgeon.fuse(str(MODELS / name), input_shapes=manifest[name]["inputs"])
        assert inspected == fused == len(with_everything.report.rewrites), name
    assert sum(row[2] for row in rows) >= 40  # the samples do fuse: a matcher that fuses nothing must fail
    notices = [line for line in done.stderr.splitlines() if "numpy reference" in line]
    assert len(notices) == 1, done.stderr
    assert notices[0].startswith("surgeon: using the numpy reference kernels (slower): ") and "libsurgeon_kernels_cpu.so is not installed" in notices[0]


def test_the_cli_without_torch(tmp_path):
    sample = MODELS / "stn_ts_opset20_2d.onnx"
    fused = tmp_path / "stn.fused.onnx"
    cli = NO_TORCH + "from surgeon.cli import main; import sys; sys.argv[0] = 'surgeon'; main()"
    for args in (["fuse", str(sample), str(fused), "--validate"], ["inspect", str(sample)],
                 ["run", str(fused), "--input-shape", "x:2,1,28,28"], ["validate", str(sample), str(fused)]):
        done = _run(cli, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert "validation PASSED" in done.stdout
