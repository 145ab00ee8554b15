"""A Ray cluster of two nodes on this machine, the second one as another machine would see it.

The head runs no work (``--num-cpus 0``), so every task runs on the second node. That node is
started as user ``nobody``, from another working directory, with another HOME and TMPDIR,
under its own IP address on loopback (127.0.0.2), in a mount namespace of its own where the
head's Ray temp dir is replaced by the node's (another machine has its own /tmp) and, when the
Python install lives under /root, /root is an empty tmpfs holding only that install. So a
worker cannot read or write the driver's run directory, data or cache, as on another machine.
Needs root (``unshare``, ``setpriv``); Linux only.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.ray_cluster import stop_cluster
from tests.helpers.servers import free_port

RAY = Path(sys.executable).with_name("ray")
NODE_IP = "127.0.0.2"


@dataclass
class TwoNodes:
    address: str  # the head, HOST:PORT
    head_temp: Path  # the head's RAY_TMPDIR (the driver joins with it)
    node_root: Path  # the second node's own directories: home, tmp, cwd, ray
    node_env: dict[str, str]  # variables the second node was started with, beyond the basics

    @property
    def driver_env(self) -> dict[str, str]:
        return {
            "RAY_ADDRESS": self.address,
            "RAY_TMPDIR": str(self.head_temp),
            "RAY_AUTH_MODE": "disabled",
        }

    def stop_node(self) -> None:
        """Stop the second node at once (its raylet and workers), as a machine that goes away."""
        stop_cluster(str(self.node_root / "ray"))


def can_start() -> str | None:
    """Why two such nodes cannot be started here, or None."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root on Linux (a second node as user nobody, in its own mount namespace)"
    missing = [tool for tool in ("unshare", "setpriv", "mount") if shutil.which(tool) is None]
    if missing:
        return f"needs {', '.join(missing)}"
    try:
        pwd.getpwnam("nobody")
        grp.getgrnam("nogroup")
    except KeyError:
        return "needs the user nobody and the group nogroup"
    # a container without CAP_SYS_ADMIN refuses a mount namespace: skip there, not fail
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True, check=False)
    return "cannot make a mount namespace here (unshare --mount)" if probe.returncode else None


@contextlib.contextmanager
def two_nodes(node_env: dict[str, str] | None = None) -> Iterator[TwoNodes]:
    """Start the head and the second node on a free port; stop both at the end, even on
    failure."""
    root = Path(tempfile.mkdtemp(prefix="assay-ray-nodes-"))
    root.chmod(0o755)  # the second node's user reaches its own directories through it
    head_temp, node_root = root / "head", root / "node"
    for name in ("home", "tmp", "cwd", "ray"):
        (node_root / name).mkdir(parents=True)
        shutil.chown(node_root / name, "nobody", "nogroup")
    head_temp.mkdir()
    port = free_port()
    nodes = TwoNodes(f"127.0.0.1:{port}", head_temp, node_root, dict(node_env or {}))
    try:
        _start_head(nodes, port)
        _start_node(nodes, port)
        _wait_for_cpus(nodes, 2)
        yield nodes
    finally:
        nodes.stop_node()
        stop_cluster(str(head_temp))
        shutil.rmtree(root, ignore_errors=True)


def _start_head(nodes: TwoNodes, port: int) -> None:
    env = {**os.environ, **nodes.driver_env}
    env.pop("RAY_ADDRESS")
    command = [str(RAY), "start", "--head", "--num-cpus", "0", "--port", str(port)]
    command += ["--node-ip-address", "127.0.0.1", "--include-dashboard", "false"]
    command += ["--disable-usage-stats"]
    subprocess.run(command, check=True, capture_output=True, env=env, timeout=180)


def _start_node(nodes: TwoNodes, port: int) -> None:
    """``ray start`` of the second node: nobody, its own cwd, HOME, TMPDIR and Ray temp dir,
    none of the driver's environment but PATH and what ``node_env`` adds."""
    own = nodes.node_root
    mounts = [f"mount --bind {own / 'ray'} {nodes.head_temp}"]
    base = Path(sys.base_prefix).resolve()
    if base.is_relative_to("/root"):  # /root is not for nobody: show the Python install only
        keep = own / "python-install"
        keep.mkdir()
        mounts = [
            f"mount --bind {base} {keep}",
            "mount -t tmpfs -o mode=755 tmpfs /root",
            f"mkdir -p {base}",
            f"mount --bind {keep} {base}",
            *mounts,
        ]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(own / "home"),
        "TMPDIR": str(own / "tmp"),
        "RAY_TMPDIR": str(own / "ray"),
        "RAY_AUTH_MODE": "disabled",
        **nodes.node_env,
    }
    start = [str(RAY), "start", "--address", f"127.0.0.1:{port}", "--num-cpus", "2"]
    start += ["--node-ip-address", NODE_IP, "--disable-usage-stats"]
    script = " && ".join(["mount --make-rprivate /", *mounts, f"cd {own / 'cwd'}"])
    script += ' && exec setpriv --reuid nobody --regid nogroup --clear-groups "$@"'
    command = ["unshare", "-m", "sh", "-c", script, "sh", "env", "-i"]
    command += [f"{key}={value}" for key, value in env.items()] + start
    subprocess.run(command, check=True, capture_output=True, timeout=180)


def _wait_for_cpus(nodes: TwoNodes, cpus: int, timeout_s: float = 60.0) -> None:
    """Wait until the cluster counts ``cpus`` CPUs: the second node has registered."""
    probe = (
        "import ray; ray.init(log_to_driver=False); print(ray.cluster_resources().get('CPU', 0))"
    )
    env = {**os.environ, **nodes.driver_env}
    deadline = time.monotonic() + timeout_s
    while True:
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
        )
        if done.returncode == 0 and float(done.stdout.split()[-1]) >= cpus:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the second Ray node did not join: {done.stderr[-2000:]}")
        time.sleep(1)
