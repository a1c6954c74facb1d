"""onnxruntime's C API headers, which the op library compiles against and which the PyPI
wheel does not ship: found or fetched at build time (ops/ort/CMakeLists.txt runs this script;
stdlib only, it runs in pip's build environment).

    python cmake/ort_headers.py [--fallback DIR]   # prints the headers' folder, fetching if needed

Looked for in order: ``$ONNXRUNTIME_INCLUDE_DIR`` (when set, only there), the folder
:func:`fetch` fills (``$SURGEON_CACHE_DIR/onnxruntime-headers/<version>``, default
``~/.cache/surgeon/...``; ``--fallback DIR`` when that cannot be written), then the system's
``include/onnxruntime`` folders (Debian's ``libonnxruntime-dev``, conda).

:func:`fetch` downloads Debian trixie's ``libonnxruntime-dev`` (1.21: a library built against
it loads into onnxruntime 1.21 and every later release) with apt-get, using the archive of
this machine's own apt sources but its own lists and cache (the system's apt state is not
touched), checks the package's pinned sha256 and unpacks its headers with Python's stdlib.
"""

from __future__ import annotations

import argparse
import getpass
import glob
import hashlib
import io
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE, VERSION, SUITE = "libonnxruntime-dev", "1.21.0+dfsg-1", "trixie"
SHA256 = "14f7d959d5deacbcf1504830d4189f91fc67382b399ed9ae9d3aa9c4050ced08"
HEADER = "onnxruntime_c_api.h"
INSIDE = "usr/include/onnxruntime/"  # where the package keeps them
SYSTEM_PREFIXES = ("/usr/local", "/usr")  # their include/onnxruntime (Debian's libonnxruntime-dev)
FETCH_HINT = "set ONNXRUNTIME_INCLUDE_DIR to onnxruntime's include folder (its release archive has one)"


class HeadersNotFound(RuntimeError):
    """No usable onnxruntime C API headers; the message (one line) says how to get them."""


def _writable(root: Path) -> bool:
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return root.is_dir() and os.access(root, os.W_OK | os.X_OK)


def fetched_dir(fallback: Path | None = None) -> Path:
    """Where fetch() puts them: the user's cache (kept across builds), else `fallback` (the
    build folder) when the cache cannot be written (a read-only HOME)."""
    wanted = os.environ.get("SURGEON_CACHE_DIR")
    root = Path(wanted).expanduser() if wanted else Path.home() / ".cache" / "surgeon"
    if fallback is not None and not _writable(root):
        root = fallback
    return root / "onnxruntime-headers" / VERSION.split("+")[0]


def api_version(folder: Path) -> int:
    """ORT_API_VERSION of the headers in `folder`: the onnxruntime release 1.N they come from."""
    found = re.search(r"#define\s+ORT_API_VERSION\s+(\d+)", (folder / HEADER).read_text(errors="replace"))
    if not found:
        raise HeadersNotFound(f"{folder / HEADER} defines no ORT_API_VERSION; "
                              "set ONNXRUNTIME_INCLUDE_DIR to real headers")
    return int(found.group(1))


def find(fallback: Path | None = None) -> Path:
    """The folder holding onnxruntime_c_api.h, or HeadersNotFound naming how to get one."""
    wanted = os.environ.get("ONNXRUNTIME_INCLUDE_DIR")
    if wanted:
        for folder in (Path(wanted), Path(wanted) / "onnxruntime"):
            if (folder / HEADER).is_file():
                return folder
        raise HeadersNotFound(f"ONNXRUNTIME_INCLUDE_DIR={wanted!r} holds no {HEADER}; point it at onnxruntime's include folder")
    prefixes = [os.environ.get("CONDA_PREFIX", ""), sys.prefix, *SYSTEM_PREFIXES]
    candidates = [fetched_dir(fallback)] + [Path(p) / "include" / "onnxruntime" for p in prefixes if p]
    for folder in candidates:
        if (folder / HEADER).is_file():
            return folder
    raise HeadersNotFound(f"onnxruntime's C API headers ({HEADER}) not found, and the onnxruntime wheel has none: "
                          + FETCH_HINT)


def find_or_fetch(fallback: Path | None = None) -> Path:
    """Headers already there (find), else fetched (fetch); HeadersNotFound says why not."""
    if os.environ.get("ONNXRUNTIME_INCLUDE_DIR"):
        return find(fallback)
    try:
        return find(fallback)
    except HeadersNotFound:
        return fetch(fallback)


def _debian_archive() -> tuple[str, str]:
    """(URI, keyring) of the Debian archive in this machine's apt sources."""
    entries = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for stanza in Path(path).read_text().split("\n\n"):
            fields = dict(re.findall(r"^([\w-]+):\s*(.*)$", stanza, re.M))
            for uri in fields.get("URIs", "").split():
                entries.append((uri, fields.get("Signed-By", "")))
    for path in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]:
        if os.path.isfile(path):
            for line in Path(path).read_text().splitlines():
                m = re.match(r"\s*deb\s+(?:\[([^\]]*)\]\s+)?(\S+)", line)
                if m:
                    key = re.search(r"signed-by=(\S+)", m.group(1) or "")
                    entries.append((m.group(2), key.group(1) if key else ""))
    default_key = "/usr/share/keyrings/debian-archive-keyring.gpg"
    for uri, key in entries:
        if uri.rstrip("/").endswith("/debian"):
            return uri, key if key.startswith("/") else default_key  # not a key written inline
    raise HeadersNotFound("no Debian archive in this machine's apt sources to fetch the headers from; "
                          "set ONNXRUNTIME_INCLUDE_DIR to onnxruntime's include folder (its release archive has one)")


def _apt(args: list[str], options: list[str], cwd: str) -> None:
    done = subprocess.run(["apt-get", *options, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        err = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.startswith(("E:", "Err"))]
        raise HeadersNotFound(f"apt-get {args[0]} failed: {(err or ['exit %d' % done.returncode])[0].strip()}; "
                              "set ONNXRUNTIME_INCLUDE_DIR instead")


def _user() -> str:
    """Who downloads: apt's own _apt user could not write to our private folders."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _download(tmp: str) -> Path:
    """The pinned .deb, by apt-get with private lists and cache."""
    if shutil.which("apt-get") is None:
        raise HeadersNotFound(f"fetching the headers needs apt-get (Debian, Ubuntu); elsewhere set "
                              f"ONNXRUNTIME_INCLUDE_DIR to onnxruntime's include folder (its release archive has one)")
    uri, key = _debian_archive()
    for sub in ("state/lists/partial", "cache/archives/partial", "parts"):
        os.makedirs(os.path.join(tmp, sub))
    sources = os.path.join(tmp, "sources.list")
    Path(sources).write_text(f"deb [signed-by={key}] {uri} {SUITE} main\n")
    options = ["-q", "-o", f"Dir::Etc::SourceList={sources}", "-o", f"Dir::Etc::SourceParts={tmp}/parts",
               "-o", f"Dir::State={tmp}/state", "-o", f"Dir::Cache={tmp}/cache", "-o", "Dir::State::status=/dev/null",
               "-o", f"APT::Sandbox::User={_user()}", "-o", "Debug::NoLocking=1"]
    _apt(["update"], options, tmp)
    _apt(["download", f"{PACKAGE}={VERSION}"], options, tmp)
    debs = glob.glob(os.path.join(tmp, f"{PACKAGE}_*.deb"))
    if not debs:
        raise HeadersNotFound(f"apt-get downloaded no {PACKAGE}; set ONNXRUNTIME_INCLUDE_DIR instead")
    return Path(debs[0])


def _data_tar(deb: bytes) -> tarfile.TarFile:
    """The data.tar.* member of a .deb (an ar archive)."""
    if not deb.startswith(b"!<arch>\n"):
        raise HeadersNotFound("the downloaded package is not a .deb")
    at = 8
    while at + 60 <= len(deb):
        name, size = deb[at:at + 16].decode().strip().rstrip("/"), int(deb[at + 48:at + 58])
        body = deb[at + 60:at + 60 + size]
        if name == "data.tar.xz":
            return tarfile.open(fileobj=io.BytesIO(lzma.decompress(body)))
        if name in ("data.tar.gz", "data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body))
        at += 60 + size + (size & 1)
    raise HeadersNotFound("the package has no data.tar.xz")


def fetch(fallback: Path | None = None) -> Path:
    """Downloads and unpacks the pinned package's headers into the cache (once); their folder."""
    dest = fetched_dir(fallback)
    if (dest / HEADER).is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".fetch-") as tmp:
        data = _download(tmp).read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != SHA256:
            raise HeadersNotFound(f"{PACKAGE} {VERSION} has sha256 {got}, expected {SHA256}; not using it")
        out = Path(tmp) / "include"
        with _data_tar(data) as tar:
            for member in tar.getmembers():
                rel = member.name.lstrip("./")
                if not (member.isfile() and rel.startswith(INSIDE)):
                    continue
                target = out / rel[len(INSIDE):]
                if ".." in target.relative_to(out).parts:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())
        if not (out / HEADER).is_file():
            raise HeadersNotFound(f"{PACKAGE} {VERSION} holds no {HEADER}; point it at onnxruntime's include folder")
        try:
            os.replace(out, dest)
        except OSError:  # a concurrent fetch got there first
            if not (dest / HEADER).is_file():
                raise
    return dest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Print the folder of onnxruntime's C API headers, fetching them "
                                     "if needed.")
    parser.add_argument("--fallback", type=Path, help="where to fetch them when the user's cache is not writable")
    args = parser.parse_args(argv)
    try:
        folder = find_or_fetch(args.fallback)
        print(f"{folder}\n{api_version(folder)}")
    except (HeadersNotFound, OSError, subprocess.SubprocessError) as exc:
        print(f"onnxruntime headers: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
