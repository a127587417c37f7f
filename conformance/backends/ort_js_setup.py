"""What the ort-js backend needs, and ``conformance setup ort-js``, which installs its part of it.

The npm packages (pinned by ``ort_js_npm/package-lock.json``, shipped in the wheel) go into a per-user
cache, ``$XDG_CACHE_HOME/maxpool-conformance/ort-js`` (``~/.cache/...`` by default), with
``npm ci --ignore-scripts``: onnxruntime-node's install script only downloads CUDA libraries, which
the cpu and webgpu providers do not use. Node >= 18 and, for webgpu without a GPU, Chromium's
SwiftShader Vulkan driver come from the system; what is missing is said in one line with how to get it.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
from pathlib import Path

EPS = ("cpu", "webgpu", "wasm")
NODE_MINIMUM = 18
WASM_NODE_MINIMUM = (20, 15)  # --disable-wasm-trap-handler (ort_js.WASM_FLAGS)
HERE = Path(__file__).parent
SERVER = HERE / "ort_js_server.cjs"
LOCK_DIRECTORY = HERE / "ort_js_npm"
ICD = "/usr/lib/chromium/vk_swiftshader_icd.json"
SETUP = "conformance setup ort-js"


def cache_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base, "maxpool-conformance", "ort-js")


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


def cache_problem() -> str | None:
    installed = cache_directory() / "package-lock.json"
    if not (node_modules() / "onnxruntime-node" / "package.json").is_file() or not installed.is_file():
        return f"its npm packages are not installed in {cache_directory()}: run `{SETUP}`"
    if not filecmp.cmp(installed, LOCK_DIRECTORY / "package-lock.json", shallow=False):
        return f"its npm packages in {cache_directory()} are not the pinned ones: run `{SETUP}` again"
    return None


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


def setup() -> int:
    """``conformance setup ort-js``: exit 0 when every ep can run, 1 when the system lacks something."""
    problem = node_problem()
    if problem:
        print(f"conformance setup ort-js: {problem}")
        return 1
    if shutil.which("npm") is None:
        print("conformance setup ort-js: no `npm` on PATH: install npm (apt-get install npm)")
        return 1
    target = cache_directory()
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(LOCK_DIRECTORY / name, target / name)
    done = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                          cwd=target, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        print(f"conformance setup ort-js: npm ci failed in {target} (exit {done.returncode}): {last}")
        return 1
    print(f"conformance setup ort-js: installed onnxruntime-node and onnxruntime-web in {target}")
    problem = icd_problem()
    if problem:
        print(f"conformance setup ort-js: ep=cpu and ep=wasm are ready; {problem}")
        return 1
    return 0
