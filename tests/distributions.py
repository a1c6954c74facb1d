"""Installed distributions without pip, for the tests of plugin discovery through the
``surgeon.patterns`` entry-point group."""

import textwrap


def fake_dist(root, dist, module, body, entry="toy", version="1.2.3"):
    """An installed distribution without pip: a dist-info folder and a module on sys.path."""
    info = root / f"{dist}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[surgeon.patterns]\n{entry} = {module}:PATTERNS\n")
    (root / f"{module}.py").write_text(textwrap.dedent(body))
