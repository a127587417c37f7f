"""What the ort-js backend needs, and ``conformance setup ort-js``, which installs its part of it.

The npm packages (pinned by ``ort_js_npm/package-lock.json``, shipped in the wheel) go into a per-user
cache, ``$XDG_CACHE_HOME/maxpool-conformance/ort-js`` (``~/.cache/...`` by default), with
``npm ci --ignore-scripts``: onnxruntime-node's install script only downloads CUDA libraries, which
the cpu and webgpu providers do not use. Node >= 18 and, for webgpu without a GPU, Chromium's
SwiftShader Vulkan driver come from the system; what is missing is said in one line with how to get it.

A per-user cache is commonly restored from a CI cache, so what Node will load from it is checked
before any server starts: setup records every file of the installed tree (its size, times, inode
and SHA-256) in a manifest outside the cache, beside the suite's cache key; a file added, removed,
replaced or rewritten since (any write moves a file's ctime, which no user can set back) is
hashed again, and a tree that differs from its manifest runs nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..expand.cache import key_directory
from ..load.user_dirs import APP, base_directory
from ..load import tree_records
from ..load.limits import ReadRefused, read_regular

EPS = ("cpu", "webgpu", "wasm")
NODE_MINIMUM = 18
WASM_NODE_MINIMUM = (20, 15)  # --disable-wasm-trap-handler (ort_js.WASM_FLAGS)
HERE = Path(__file__).parent
SERVER = HERE / "ort_js_server.cjs"
LOCK_DIRECTORY = HERE / "ort_js_npm"
ICD = "/usr/lib/chromium/vk_swiftshader_icd.json"
SETUP = "conformance setup ort-js"
MAX_PACKAGE_JSON_BYTES = 1 << 20
MAX_LOCK_BYTES = 16 << 20  # the pinned package-lock.json is about 200 kB


def cache_directory() -> Path:
    base = base_directory("XDG_CACHE_HOME", ".cache")
    return Path(base or Path.home() / ".cache", APP, "ort-js")


def node_modules() -> Path:
    return cache_directory() / "node_modules"


def node_problem(ep: str | None = None) -> str | None:
    """Why the system's ``node`` will not do (for ``ep``), or None."""
    node = shutil.which("node")
    if node is None:
        return f"no `node` on PATH: install Node.js >= {NODE_MINIMUM} (apt-get install nodejs)"
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"`node --version` failed ({e}): install Node.js >= {NODE_MINIMUM}"
    found = re.match(r"v(\d+)\.(\d+)\.", version)
    if not found or int(found.group(1)) < NODE_MINIMUM:
        return f"node {version or '(no version)'} is too old: ort-js needs Node.js >= {NODE_MINIMUM}"
    if ep == "wasm" and (int(found.group(1)), int(found.group(2))) < WASM_NODE_MINIMUM:
        return f"node {version} is too old for ep=wasm: it needs Node.js >= {'.'.join(map(str, WASM_NODE_MINIMUM))}"
    return None


def icd_problem() -> str | None:
    if os.environ.get("VK_ICD_FILENAMES") or Path(ICD).is_file():
        return None
    return f"no SwiftShader Vulkan driver ({ICD}) for ep=webgpu: apt-get install chromium"


def package_json(package: str) -> dict[str, Any]:
    """An installed package's package.json, read bounded from a regular file only (never a FIFO,
    a device or a link to one); ValueError for anything else."""
    try:
        data = json.loads(read_regular(node_modules() / package / "package.json", MAX_PACKAGE_JSON_BYTES,
                                       follow_links=False))
    except (ReadRefused, ValueError, RecursionError) as e:
        raise ValueError(f"{package}/package.json is not a package.json: {getattr(e, 'message', e)}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{package}/package.json is not a package.json")
    return data


def manifest_path() -> Path:
    return key_directory() / "ort-js-manifest.json"


def record_manifest() -> None:
    """The installed tree as it is now, written outside the cache (after ``npm ci``)."""
    tree_records.record(node_modules(), manifest_path())


def tree_problem() -> str | None:
    """Where the installed tree differs from the manifest its setup recorded, the first difference."""
    problem = tree_records.difference(node_modules(), manifest_path())
    return None if problem is None else f"{problem}: run `{SETUP} --force`"


def cache_problem() -> str | None:
    not_installed = f"its npm packages are not installed in {cache_directory()}: run `{SETUP}`"
    try:
        pinned = read_regular(cache_directory() / "package-lock.json", MAX_LOCK_BYTES, follow_links=False)
    except ReadRefused:
        return not_installed
    if pinned != (LOCK_DIRECTORY / "package-lock.json").read_bytes():
        return f"its npm packages in {cache_directory()} are not the pinned ones: run `{SETUP}` again"
    try:
        package_json("onnxruntime-node")
        package_json("onnxruntime-web")
    except ValueError:
        return not_installed
    return tree_problem()


def problems(ep: str) -> list[str]:
    """One line per thing missing for ``ep``."""
    found = [node_problem(ep), cache_problem()]
    if ep == "webgpu":
        found.append(icd_problem())
    return [p for p in found if p]


def environment(ep: str) -> dict[str, str]:
    """The Node server's environment: on webgpu, Dawn pointed at SwiftShader unless a driver is chosen."""
    env = dict(os.environ)
    if ep == "webgpu" and not env.get("VK_ICD_FILENAMES"):
        env["VK_ICD_FILENAMES"] = ICD
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(Path(ICD).parent), env.get("LD_LIBRARY_PATH")]))
    return env


def setup(force: bool = False) -> int:
    """``conformance setup ort-js``: exit 0 when every ep can run, 1 when the system lacks something.
    An installed tree that matches its manifest is kept, unless ``force``."""
    problem = node_problem()
    if problem:
        print(f"conformance setup ort-js: {problem}")
        return 1
    target = cache_directory()
    if force or cache_problem():
        if shutil.which("npm") is None:
            print("conformance setup ort-js: no `npm` on PATH: install npm (apt-get install npm)")
            return 1
        target.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            (target / name).unlink(missing_ok=True)  # never written through a link planted there
            shutil.copyfile(LOCK_DIRECTORY / name, target / name)
        done = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                              cwd=target, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"conformance setup ort-js: npm ci failed in {target} (exit {done.returncode}): {npm_error(done.stderr)}")
            return 1
        record_manifest()
        print(f"conformance setup ort-js: installed onnxruntime-node and onnxruntime-web in {target}")
    else:
        print(f"conformance setup ort-js: onnxruntime-node and onnxruntime-web are installed in {target}, "
              f"as recorded (--force installs them again)")
    problem = icd_problem()
    if problem:
        print(f"conformance setup ort-js: ep=cpu and ep=wasm are ready; {problem}")
        return 1
    return 0


# npm's lines that say where to look or what code it gave, rather than what went wrong
NPM_NOISE = re.compile(r"A complete log of this run|^npm (?:error|ERR!) (?:code|errno|syscall|path|A complete)\b|"
                       r"^npm (?:error|ERR!)\s*$")


def npm_error(stderr: str) -> str:
    """npm's own error line: its first that says what went wrong (not the log file's name)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if not NPM_NOISE.search(line)]
    errors = [line for line in said if line.startswith(("npm error", "npm ERR!"))]
    return (errors or said or lines or ["(no output)"])[0]
