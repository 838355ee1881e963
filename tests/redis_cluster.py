"""A real Redis Cluster of six ``redis-server`` processes on free 127.0.0.1 ports (three
masters, three replicas), for the tests of the spread index and for benchmarks."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

#: Milliseconds before a silent master is failed over by its replica: short, for the
#: failover test; a loaded machine may need longer (Redis's default is 15,000).
NODE_TIMEOUT_MS = 2000


def _free_ports(count: int) -> list[int]:
    """Ports free now whose cluster-bus twins (port + 10000) are free too."""
    ports: list[int] = []
    while len(ports) < count:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port + 10000 > 65535 or port in ports:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        ports.append(port)
    return ports


class RedisCluster:
    """Six redis-servers joined by ``redis-cli --cluster create --cluster-replicas 1``."""

    def __init__(
        self, directory: Path, nodes: int = 6, node_timeout_ms: int = NODE_TIMEOUT_MS
    ) -> None:
        self.directory = directory
        self.node_timeout_ms = node_timeout_ms
        self.ports = _free_ports(nodes)
        self.processes: dict[int, subprocess.Popen] = {}

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0?cluster=true"

    def _start_node(self, port: int) -> None:
        node_dir = self.directory / str(port)
        node_dir.mkdir(parents=True, exist_ok=True)
        self.processes[port] = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
             "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", str(self.node_timeout_ms), "--save", "",
             "--appendonly", "no", "--dir", str(node_dir),
             "--logfile", str(node_dir / "redis.log")],
            cwd=node_dir,
        )  # fmt: skip

    def _cli(self, *args: str, port: int | None = None) -> str:
        command = ["redis-cli", "-h", "127.0.0.1", "-p", str(port or self.ports[0]), *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=60).stdout

    def start(self) -> RedisCluster:
        for port in self.ports:
            self._start_node(port)
        deadline = time.monotonic() + 20
        for port in self.ports:
            while self._cli("ping", port=port).strip() != "PONG":
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"redis-server did not start on port {port}")
                time.sleep(0.05)
        nodes = [f"127.0.0.1:{port}" for port in self.ports]
        output = subprocess.run(
            ["redis-cli", "--cluster", "create", *nodes, "--cluster-replicas", "1",
             "--cluster-yes"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if output.returncode != 0:
            self.stop()
            raise RuntimeError(f"redis-cli --cluster create failed: {output.stdout}")
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until every slot is served and every master has its replica in sync."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = [p for p in self.ports if self.processes[p].poll() is None]
            info = self._cli("cluster", "info", port=alive[0])
            if "cluster_state:ok" in info and len(self.masters()) == 3 and self._replicas_synced():
                return
            time.sleep(0.1)
        raise RuntimeError("the Redis Cluster did not become ready")

    def _replicas_synced(self) -> bool:
        for port in self.masters():
            info = self._cli("info", "replication", port=port)
            if "connected_slaves:1" not in info or "state=online" not in info:
                return False
        return True

    def masters(self) -> list[int]:
        """The ports of the running masters that serve slots."""
        masters = []
        for port, process in self.processes.items():
            if process.poll() is None:
                role = self._cli("role", port=port).split("\n", 1)[0].strip()
                if role == "master" and self._serves_slots(port):
                    masters.append(port)
        return masters

    def _serves_slots(self, port: int) -> bool:
        for line in self._cli("cluster", "nodes", port=port).splitlines():
            fields = line.split()
            if "myself" in fields[2]:
                return "master" in fields[2] and len(fields) > 8
        return False

    def kill(self, port: int) -> None:
        """SIGKILL one node (its replica takes over after the node timeout)."""
        self.processes[port].kill()
        self.processes[port].wait(timeout=20)

    def wait_failed_over(self, port: int, timeout: float = 60.0) -> None:
        """Until another node serves the slots the killed node *port* served."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = [p for p in self.ports if self.processes[p].poll() is None]
            info = self._cli("cluster", "info", port=alive[0])
            if "cluster_state:ok" in info and len(self.masters()) == 3:
                return
            time.sleep(0.1)
        raise RuntimeError(f"the slots of {port} did not fail over")

    def restart(self, port: int) -> None:
        """Start a killed node again (it rejoins, as a replica of whoever took over)."""
        self._start_node(port)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes.clear()


def cluster_available() -> str | None:
    """Why a cluster cannot be started here, or ``None``."""
    for program in ("redis-server", "redis-cli"):
        if shutil.which(program) is None:
            return f"the {program} program (apt-get install redis-server)"
    return None
