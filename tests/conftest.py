"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CORPORA = PROJECT_ROOT.parent / "shared" / "corpora"


# No deadline and no too_slow health check: on a loaded machine an example or its data
# can take seconds, which says nothing about the code. A test's own @settings may still
# set max_examples and the like; it keeps these two unless it names them.
settings.register_profile(
    "scrapy-simhash", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("scrapy-simhash")


E2E = Path(__file__).resolve().parent / "e2e"

#: The fixtures that start or use a redis-server, and those that start a Redis Cluster.
REDIS_FIXTURES = frozenset({"redis_server", "redis_client", "make_redis_server"})
CLUSTER_FIXTURES = frozenset({"redis_cluster", "make_redis_cluster"})


def pytest_collection_modifyitems(items):
    # Markers follow from what a test uses, so `-m` selects by cost without a list to keep:
    #   e2e      every test under tests/e2e/ (real crawls or CLI runs in subprocesses);
    #   redis    it uses a redis-server (redis_server, redis_client, make_redis_server)
    #            or a cluster of them;
    #   cluster  it uses a Redis Cluster (redis_cluster, make_redis_cluster: six servers);
    #   slow     e2e and cluster tests, and those marked by hand (worker pools, 50 MB
    #            pages, more than about a second): `pytest -m "not slow"` is the fast lane.
    # A fixture asked for at run time (request.getfixturevalue) is not in fixturenames:
    # such a test's parameter carries the marker itself, and _used_fixtures_are_marked
    # fails a test that uses one of these fixtures without its marker.
    for item in items:
        used = set(item.fixturenames)
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)
        if used & (REDIS_FIXTURES | CLUSTER_FIXTURES):
            item.add_marker(pytest.mark.redis)
        if used & CLUSTER_FIXTURES:
            item.add_marker(pytest.mark.cluster)
        if item.get_closest_marker("e2e") or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _used_fixtures_are_marked(request):
    """After the test: every fixture it used, asked for by name or at run time, has its
    marker on the test (else `-m "not redis"` or `-m "not slow"` would run it anyway)."""
    yield
    used = set(request.fixturenames)
    for fixtures, marker in (
        (REDIS_FIXTURES | CLUSTER_FIXTURES, "redis"),
        (CLUSTER_FIXTURES, "cluster"),
    ):
        if used & fixtures and request.node.get_closest_marker(marker) is None:
            pytest.fail(f"uses {sorted(used & fixtures)} but is not marked {marker!r}")
    if used & CLUSTER_FIXTURES and request.node.get_closest_marker("slow") is None:
        pytest.fail("uses a Redis Cluster but is not marked 'slow'")


#: The files that take longest (pytest --durations=80, summed by file), started first so
#: that no worker is left running one of them while the other has nothing to do. Only the
#: order depends on this list: a file missing from it runs after them, in collection order.
LONGEST_FIRST = (
    "tests/e2e/test_transcripts.py",
    "tests/e2e/test_journal_crawls.py",
    "tests/e2e/test_feed_disk_full.py",
    "tests/e2e/test_example_crawl.py",
    "tests/e2e/test_skip_crawls.py",
    "tests/index/test_contained_race.py",
    "tests/index/test_redis_index.py",
    "tests/e2e/test_reliability.py",
    "tests/e2e/test_first_hour.py",
    "tests/e2e/test_middleware_crawls.py",
    "tests/index/test_index_contract.py",
    "tests/crawl/test_workers.py",
    "tests/e2e/test_redis_spread_crawl.py",
)


def pytest_xdist_make_scheduler(config, log):
    # --dist load (pyproject.toml's addopts), with two changes: a file that defines a
    # module-scoped fixture (a crawl, a project, a Dask cluster) runs in one worker, so the
    # fixture is made once; and the longest files start first. (xdist's loadgroup kept
    # such files together by renaming their tests, which pytest 9.2 no longer lets it do:
    # its xdist_group marks were ignored, and a module's fixture was made in each worker.)
    if config.getvalue("dist") != "load":
        return None
    import functools

    from xdist.scheduler import LoadScopeScheduling

    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}

    @functools.cache
    def shares_fixtures(path: str) -> bool:
        return 'scope="module"' in (config.rootpath / path).read_text(encoding="utf-8")

    class SharedFixturesTogether(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if shares_fixtures(path) else nodeid

        def _assign_work_unit(self, node):
            if not self.ordered:
                first = sorted(self.workqueue, key=lambda s: rank.get(s.split("::")[0], len(rank)))
                for scope in first:
                    self.workqueue.move_to_end(scope)
                self.ordered = True
            super()._assign_work_unit(node)

    config.option.loadscopereorder = False  # the order above, not the biggest files first
    return SharedFixturesTogether(config, log)


def pytest_runtest_setup(item):
    if item.get_closest_marker("needs_compiled") is not None:
        from scrapy_simhash.analysis.speedups import compiled

        # None where the accelerator is not built or SCRAPY_SIMHASH_PURE_PYTHON is set.
        if compiled("combine") is None:
            pytest.skip("the C accelerator is not built (or SCRAPY_SIMHASH_PURE_PYTHON is set)")


@pytest.fixture(autouse=True, scope="session")
def _private_jieba_cache(tmp_path_factory):
    # Keep jieba's dictionary cache out of the user's home during tests.
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))


@pytest.fixture(autouse=True)
def _restore_environment():
    # Scrapy's get_project_settings() exports SCRAPY_SETTINGS_MODULE into os.environ; left
    # there, it would point the crawls that later tests start at another test's project.
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def corpora() -> Path:
    """The shared real-text corpora; tests using it skip when it is absent."""
    if not CORPORA.is_dir():
        pytest.skip(f"needs the shared corpora at {CORPORA} (not part of a user's checkout)")
    return CORPORA


# -- a real redis-server for the Redis index tests ---------------------------------------


class RedisServer:
    """A ``redis-server`` of the tests' own on 127.0.0.1, without persistence."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.directory = directory
        self.port = port or _free_port()
        self.process = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, *extra: str) -> RedisServer:
        import subprocess
        import time

        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        log = self.directory / f"redis-{self.port}.log"
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.directory), "--logfile", str(log), *extra],
            cwd=self.directory,
        )  # fmt: skip
        # No retries inside the client: this loop polls every 50 ms.
        client = redis.Redis(port=self.port, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.AuthenticationError:
                break  # started with --requirepass: it is up
            except redis.ConnectionError as e:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    text = log.read_text() if log.exists() else ""
                    raise RuntimeError(f"redis-server did not start on {self.port}: {text}") from e
                time.sleep(0.05)
        client.close()
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)
        self.process = None


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _require_redis_server() -> None:
    import shutil

    missing = []
    if shutil.which("redis-server") is None:
        missing.append("the redis-server program (apt-get install redis-server)")
    try:
        import redis  # noqa: F401
    except ImportError:
        missing.append("the redis package (pip install 'scrapy-simhash[redis]')")
    if missing:
        message = "Redis tests need " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message + "; CI must run them")
        pytest.skip(message)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """One redis-server for the session; tests keep apart by using their own key prefix."""
    _require_redis_server()
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix of the test's own on the shared server."""
    import uuid

    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def redis_client(redis_server):
    """A client of the shared server, answering str."""
    import redis

    client = redis.Redis(port=redis_server.port, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def make_redis_server(tmp_path):
    """Start private redis-servers (for tests that stop, restart or configure one)."""
    _require_redis_server()
    servers: list[RedisServer] = []

    def make(*extra: str, port: int | None = None) -> RedisServer:
        server = RedisServer(tmp_path, port).start(*extra)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def _require_cluster() -> None:
    from redis_cluster import cluster_available

    _require_redis_server()
    missing = cluster_available()
    if missing:
        message = f"the Redis Cluster tests need {missing}"
        if os.environ.get("CI"):
            pytest.fail(message + "; CI must run them")
        pytest.skip(message)


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory):
    """One Redis Cluster for the session (three masters, three replicas on free ports),
    started by the first test that asks for it (one a pytest-xdist worker); tests keep
    apart by using their own key prefix. Tests that kill a node start their own cluster
    (``make_redis_cluster``)."""
    from redis_cluster import RedisCluster

    _require_cluster()
    # Nodes on a loaded machine may not answer the cluster bus within a short timeout.
    cluster = RedisCluster(tmp_path_factory.mktemp("cluster"), node_timeout_ms=10000).start()
    yield cluster
    cluster.stop()


@pytest.fixture
def make_redis_cluster(tmp_path):
    """Start a Redis Cluster of the test's own (stopped after the test)."""
    from redis_cluster import RedisCluster

    _require_cluster()
    clusters = []

    def make():
        cluster = RedisCluster(tmp_path / f"cluster-{len(clusters)}").start()
        clusters.append(cluster)
        return cluster

    yield make
    for cluster in clusters:
        cluster.stop()
