"""Where the `openvino` pip wheel keeps its CMake package (``openvino/cmake/OpenVINOConfig.cmake``,
beside ``openvino/include`` and ``openvino/libs``): ops/openvino/CMakeLists.txt runs this script
to build the OpenVINO extension against the very OpenVINO that will load it (stdlib only; it
runs in pip's build environment).

    python cmake/openvino_dir.py      # prints the folder, or nothing (exit 0) when there is none

Looked for in the environment surgeon is being installed into (pip's isolated build runs this
interpreter with that environment's site-packages hidden from ``sys.path``, but ``sysconfig``
still names them), then wherever this interpreter can import ``openvino`` from (a build
without isolation, or openvino among the build requirements).  The package is not imported:
only its files are looked at.
"""

from __future__ import annotations

import importlib.util
import os
import sysconfig

CONFIG = os.path.join("cmake", "OpenVINOConfig.cmake")


def candidates() -> list[str]:
    paths = sysconfig.get_paths()
    found = [os.path.join(paths[key], "openvino") for key in ("platlib", "purelib") if key in paths]
    try:
        spec = importlib.util.find_spec("openvino")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        found.extend(spec.submodule_search_locations or [])
    return list(dict.fromkeys(os.path.realpath(p) for p in found))


def main() -> None:
    for folder in candidates():
        if os.path.isfile(os.path.join(folder, CONFIG)):
            print(os.path.join(folder, "cmake"))
            return


if __name__ == "__main__":
    main()
