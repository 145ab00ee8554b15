"""The Ray executor: batches of work run on a Ray cluster, results stream back to the driver.

The driver alone writes the run directory (under its lock): each finished batch is handed to
``on_batch`` as it arrives, in completion order, which is where the caller appends results. A
worker that dies loses only the batch it was running, which Ray runs again (``max_retries``:
system failures only, a bug in the work is not retried). At most ``2 x cluster CPUs`` batches
are in flight, so memory stays bounded on inputs of any size.

The cluster is ``RAY_ADDRESS`` when set, else a local one started for this process with the
cores it may use. ``RAY_ADDRESS`` is probed before Ray is asked to join it: Ray itself retries
an address where no cluster answers for many minutes (:func:`check_address`).

An exception a worker raises comes back to the driver as what it was: an assay error as the
same error (its one line, as in-process), anything else as its own type and message, with the
worker's traceback only in the chain ``--debug`` prints (:func:`worker_error`). An error
raised on another node than the driver's names that node (:func:`on_node`): an assay error
keeps its type, anything else becomes an :class:`~assay.errors.ExecutorError` (exit 1). A
batch Ray could not finish after its retries (its worker process died, was killed for lack of
memory, or its node went away) ends the run with an :class:`~assay.errors.ExecutorError`
naming why, the node that ran it and the batch's work (:func:`lost_batch`); the batches
finished before it are kept, as they are when no node with a CPU is left to run on
(:class:`_CpuWatch`, which waits ``node_wait_s`` for one to come back).

Ray's error for a worker that died names no node, so each task notes its node in the
cluster's key-value store as it starts (:func:`_note_start`), under a key the driver chose for
its batch, and the driver reads it back when the batch is lost. The task counts its starts
there too: Ray reruns a task its memory monitor killed for ever (``RAY_task_oom_retries``
unset), so a batch too big for its node would keep the run going without end; the driver
ends it once the batch has started more often than its retries allow (:class:`_StartWatch`).

Each task gets, besides its batch, the :class:`~assay.model.NodeContext` of the run: what a
worker on any node needs from the driver (its working directory for relative paths, the
server URL, the API key's variable; never the key).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import os
import signal
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Annotated, Any, TypeVar

from pydantic import Field

from ..errors import AssayError, ConfigError, ExecutorError, shown

T = TypeVar("T")
R = TypeVar("R")
C = TypeVar("C")  # what every worker gets from the driver beside its batch
EXTRA_HINT = "install the extra: pip install 'assay[ray]'"
#: How many times a batch is run again after its worker died (Ray's ``max_retries``).
MAX_RETRIES = 3
# Ray's own budget for a batch its memory monitor killed (for ever unless set), in its case
_OOM_RETRIES = "RAY_task_oom_retries"
#: Seconds the probe of ``RAY_ADDRESS`` waits for the cluster to answer.
PROBE_TIMEOUT_S = 5.0
#: Seconds a run waits, by default, for a node with CPUs to (re)join a cluster that has none
#: left before it ends (``--ray-node-wait``): Ray would keep the batches waiting for ever.
NO_CPU_GRACE_S = 30.0
#: What ``--ray-node-wait`` takes, beside a number of seconds, to wait for ever.
WAIT_FOREVER = "forever"
#: A run's ``--ray-node-wait`` as its settings keep it: seconds, or None to wait for ever.
NodeWait = Annotated[float, Field(gt=0, allow_inf_nan=False)] | None
# where each task notes the node it runs on (the cluster's key-value store, this namespace)
_WHERE_NAMESPACE = "assay-ray-where"
#: Seconds between looks at the cluster's CPUs while no batch finishes.
CPU_CHECK_S = 2.0
# An HTTP/2 client's opening: the preface and an empty SETTINGS frame. A Ray head (its GCS,
# or the Ray Client server of ray://) speaks gRPC, which is HTTP/2: it answers with a frame of
# its own. Anything else (nothing there, a web server) does not.
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_HTTP2_SETTINGS = 0x04
_ADDRESS_HINT = (
    "set RAY_ADDRESS to HOST:PORT of a running Ray head, or unset it to start a local one"
)


def ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor ray needs Ray, which is not installed", hint=EXTRA_HINT
        ) from None
    return ray


# Whether connect() made this process's connection to Ray (the caller may have made their own)
_connected_here = False


def connect() -> Any:
    """Ray, connected to ``RAY_ADDRESS`` or to a local cluster on this machine's cores."""
    global _connected_here
    ray = ray_module()
    if not ray.is_initialized():
        check_address()
        address = os.environ.get("RAY_ADDRESS") or None
        options: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
        if address is None:
            options |= {"num_cpus": len(os.sched_getaffinity(0)), "include_dashboard": False}
        with _keeping_sigterm_handler():
            try:
                ray.init(address=address, **options)
            except ConnectionError as error:  # "auto" with no cluster running, and the like
                if address is None:
                    raise
                raise ConfigError(
                    f"RAY_ADDRESS {address}: {' '.join(str(error).split())}", hint=_ADDRESS_HINT
                ) from None
            except OSError as error:
                if "AF_UNIX path length" not in str(error):
                    raise
                raise _temp_dir_too_long(error) from None
        _connected_here = True
        _cluster_messages_to_stderr()
    return ray


def _cluster_messages_to_stderr() -> None:
    """Ray's driver prints the cluster's messages (``(raylet) A worker died...``, ``Task
    failed due to oom...``) on stdout, even with ``log_to_driver=False``: in a command's
    output they would be read as its results. They go to stderr, beside assay's own errors.
    Ray's thread looks its printer up by name at each message, so the name is rebound (in a
    Ray without that printer, nothing is changed)."""
    module: Any = importlib.import_module("ray._private.worker")
    printer = getattr(module, "print_to_stdstream", None)
    if printer is None or printer.__name__ == _RAYLET_TO_STDERR:  # rebound already
        return
    module.print_to_stdstream = _raylet_to_stderr(printer)


_RAYLET_TO_STDERR = "print_raylet_to_stderr"


def _raylet_to_stderr(printer: Callable[[dict[str, Any], bool], None]) -> Any:
    """``printer``, with the cluster's messages (those of ``pid`` raylet) marked for stderr."""

    def print_raylet_to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        printer({**data, "is_err": True} if data.get("pid") == "raylet" else data, ignore_prefix)

    return print_raylet_to_stderr


def _temp_dir_too_long(error: OSError) -> ConfigError:
    """A local cluster keeps its sockets under its temp directory, and a Unix socket's path
    is at most 107 bytes: a deep RAY_TMPDIR cannot hold them."""
    where = os.environ.get("RAY_TMPDIR") or "Ray's temp directory"
    return ConfigError(
        f"--executor ray: a local Ray cluster cannot keep its sockets under {where}: "
        f"{' '.join(str(error).split())}",
        hint="set RAY_TMPDIR to a short directory (export RAY_TMPDIR=/tmp/ray)",
    )


@contextlib.contextmanager
def _keeping_sigterm_handler() -> Iterator[None]:
    """ray.init makes SIGTERM exit the driver at once (``sys.exit(15)``); the command's own
    handler, which stops a run as Ctrl-C does (:mod:`assay.interrupts`), is put back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


@contextlib.contextmanager
def _interrupt_at_once() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt while the driver waits on Ray. Called from a coroutine
    (a command's ``asyncio.run``), it would not: asyncio's handler only cancels the main task,
    which cannot run until this blocking call returns, so the first Ctrl-C went unheeded
    until every batch was done. A SIGINT ignored (a background job) stays ignored."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no event loop here: Python's own handler is in place
        yield
        return
    before = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or before in (
        signal.SIG_IGN,
        signal.default_int_handler,
    ):
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def check_address() -> None:
    """Refuse at once a ``RAY_ADDRESS`` where no Ray head answers (ray.init would retry it for
    many minutes, whatever its timeout settings say). ``auto`` and ``local`` name no address
    to probe; ray.init finds out about those quickly by itself."""
    address = os.environ.get("RAY_ADDRESS") or ""
    target = _host_port(address)
    if target is None:
        return
    problem = _probe(*target)
    if problem is not None:
        raise ConfigError(f"RAY_ADDRESS {address}: {problem}", hint=_ADDRESS_HINT)


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of ``HOST:PORT`` or ``ray://HOST:PORT``; None for ``auto``, ``local``,
    an empty value. A value of another form is refused here: Ray would not join it either."""
    if address in ("", "auto", "local"):
        return None
    bare = address.removeprefix("ray://").rstrip("/")
    host, colon, port = bare.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(
            f"RAY_ADDRESS {address}: not HOST:PORT (or ray://HOST:PORT, auto, local)",
            hint=_ADDRESS_HINT,
        )
    return host.strip("[]"), int(port)


def _probe(host: str, port: int) -> str | None:
    """Why no Ray head answers at ``host:port`` within :data:`PROBE_TIMEOUT_S`, or None."""
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S) as connection:
            if os.environ.get("RAY_USE_TLS", "0") not in ("", "0"):
                return None  # a TLS cluster answers only after a handshake: reachable is enough
            connection.sendall(_HTTP2_HELLO)
            header = _read(connection, 9)
    except TimeoutError:
        return f"no answer within {PROBE_TIMEOUT_S:g} s"
    except OSError as error:
        return f"cannot connect ({error.strerror or type(error).__name__})"
    if len(header) < 9 or header[3] != _HTTP2_SETTINGS:
        return "the server there is not a Ray cluster (it does not speak gRPC)"
    return None


def _read(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size and (chunk := connection.recv(size - len(data))):
        data += chunk
    return data


def parse_node_wait(value: str) -> float | None:
    """``--ray-node-wait``: seconds above 0, or :data:`WAIT_FOREVER` (None: wait for ever)."""
    if value.strip().lower() == WAIT_FOREVER:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):  # NaN too
        raise ConfigError(
            f"--ray-node-wait: must be a number of seconds above 0, or {WAIT_FOREVER}; got "
            f"{shown(value)}",
            hint="how long a run waits for a node with CPUs to join a cluster that has none "
            f"left (default {NO_CPU_GRACE_S:g})",
        )
    return seconds


def ray_map(
    function: Callable[[T, C], R],
    batches: Iterable[T],
    on_batch: Callable[[R], None],
    *,
    context: C,
    describe: Callable[[T], str] = lambda _: "a batch",
    max_retries: int = MAX_RETRIES,
    node_wait_s: float | None = NO_CPU_GRACE_S,
) -> int:
    """Run ``function`` on every batch on the cluster; ``on_batch`` gets each result as it
    arrives. Returns the number of batches done. ``function`` gets each batch with
    ``context``, what a worker needs from the driver besides the run's settings (the model
    layer's ``NodeContext``: the driver's working directory, its server URL, the API key's
    variable). ``describe`` names a batch's work (``records v0 to v99 of data.jsonl``) for the
    error that ends the run when Ray loses it. ``node_wait_s`` is how long the run waits for
    a node with CPUs when the cluster has none left (None: for ever)."""
    ray = connect()
    remote = ray.remote(max_retries=max_retries, retry_exceptions=False)(_on_a_node)
    # the task (and its worker's process title, ray::NAME) named by the work, not the wrapper
    remote = remote.options(name=getattr(function, "__name__", "batch"))
    cpus = ray.cluster_resources().get("CPU", 0)
    limit = max(2, 2 * int(cpus))
    here = ray.get_runtime_context().get_node_id()
    run = uuid.uuid4().hex  # this call's keys in the store of where tasks run
    queue: Iterator[T] = iter(batches)
    keys = (f"{run}/{number}" for number in itertools.count())
    in_flight: dict[Any, tuple[T, str]] = {}  # each running batch and its key, by its result
    watch = _CpuWatch(ray, node_wait_s, had_cpus=cpus > 0)
    starts = _StartWatch(run, max_retries)
    done = 0
    with _interrupt_at_once():
        try:
            while True:
                while len(in_flight) < limit and (batch := next(queue, None)) is not None:
                    key = next(keys)
                    in_flight[remote.remote(function, batch, context, here, key)] = (batch, key)
                if not in_flight:
                    return done
                ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=CPU_CHECK_S)
                starts.check(in_flight.values(), describe)
                if not ready:
                    watch.check(ray, [batch for batch, _ in in_flight.values()], describe)
                    continue
                batch, key = in_flight.pop(ready[0])
                try:
                    result = ray.get(ready[0])
                except ray.exceptions.RayTaskError as error:
                    raise worker_error(error) from error
                except ray.exceptions.RayError as error:  # the worker or its node gave out
                    where, tries = _where(key), _retries_of(error, max_retries)
                    raise lost_batch(error, describe(batch), tries, where) from error
                _forget(f"{key}/")
                on_batch(result)
                done += 1
        finally:
            _forget(f"{run}/")
            if in_flight:
                _stop_batches(ray)


def _stop_batches(ray: Any) -> None:
    """Stop the batches still running when a run ends early (an interrupt or an error) by
    ending this driver's Ray job, which Ray does by killing the job's workers, when assay made
    the connection; a connection the caller made is theirs to end, and its batches finish on
    the cluster, their results dropped. Not with ``ray.cancel``: Ray aborts a driver whose
    cancelled task's reply is already on its way ("Check failed: ... Tried to complete task
    that was not pending", exit 1 in place of the command's own exit and line); measured in
    benchmarks/ray_cancel_race.py, numbers in docs/scaling.md."""
    global _connected_here
    if _connected_here:
        _connected_here = False
        ray.shutdown()


class _StartWatch:
    """Ends a run one of whose batches Ray keeps running again. A task its memory monitor
    killed is rerun for ever by Ray's default (its ``max_retries`` counts other deaths only):
    a batch too big for its node kept the run going without end, with only Ray's own
    messages to show for it. Every :data:`CPU_CHECK_S` seconds the driver reads how often each
    batch in flight has started (each task counts its own starts, :func:`_note_start`) and
    ends the run, naming the batch, once one has started more often than ``1 + max_retries``.
    A budget the user set in ``RAY_task_oom_retries`` is Ray's to keep, and left to it."""

    def __init__(self, run: str, max_retries: int) -> None:
        self.run = run
        self.most = None if _user_oom_budget() is not None else 1 + max_retries
        self.max_retries = max_retries
        self.next_look = time.monotonic() + CPU_CHECK_S

    def check(self, in_flight: Iterable[tuple[Any, str]], describe: Callable[[Any], str]) -> None:
        if self.most is None or time.monotonic() < self.next_look:
            return
        self.next_look = time.monotonic() + CPU_CHECK_S
        starts = _starts(self.run)
        for batch, key in in_flight:
            if starts[key] > self.most:
                what, node = describe(batch), _where(key)
                raise lost_batch(_KilledOverAndOver(), what, self.max_retries, node)


class _KilledOverAndOver(Exception):
    """A batch Ray kept running again after its retries: its worker was killed each time,
    which Ray does without end only for a worker its memory monitor killed."""


def _user_oom_budget() -> int | None:
    """``RAY_task_oom_retries`` when the user set it to a budget (0 or more); None when it is
    unset or Ray's own "for ever" (-1)."""
    with contextlib.suppress(ValueError):
        budget = int(os.environ.get(_OOM_RETRIES, "-1"))
        return budget if budget >= 0 else None
    return None


def _retries_of(error: BaseException, max_retries: int) -> int:
    """How many times Ray ran the lost batch again: a batch its memory monitor killed has the
    budget of ``RAY_task_oom_retries`` (when the user set it), any other ``max_retries``."""
    budget = _user_oom_budget()
    if type(error).__name__ != "OutOfMemoryError" or budget is None:
        return max_retries
    return budget


class _CpuWatch:
    """Ends a run whose cluster had CPUs and has had none for ``wait_s`` seconds (every node
    that ran work went away, and only a head started with ``--num-cpus 0`` is left): Ray
    itself keeps the batches waiting for a node for ever, and the run would hang without a
    word. A cluster that had no CPU from the start is left to wait, as Ray does (an
    autoscaler may be bringing its first node up), and so is any with ``wait_s`` None."""

    def __init__(self, ray: Any, wait_s: float | None, *, had_cpus: bool) -> None:
        self.wait_s = wait_s
        self.had_cpus = had_cpus
        self.nodes = _nodes_with_cpus(ray)  # the nodes that ran work, to name when gone
        self.none_since: float | None = None

    def check(self, ray: Any, waiting: list[Any], describe: Callable[[Any], str]) -> None:
        if ray.cluster_resources().get("CPU", 0) > 0:
            self.had_cpus = True
            self.none_since = None
            self.nodes |= _nodes_with_cpus(ray)
            return
        if not self.had_cpus or self.wait_s is None:
            return
        now = time.monotonic()
        self.none_since = self.none_since or now
        if now - self.none_since >= self.wait_s:
            raise no_cpu_left(waiting, describe, self.wait_s, sorted(self.nodes))


def _nodes_with_cpus(ray: Any) -> set[str]:
    """The nodes of the cluster that are alive and have CPUs, as errors name them."""
    try:
        nodes = ray.nodes()
    except Exception:  # only ever used to name nodes in an error
        return set()
    return {
        _node_name(node.get("NodeManagerAddress"), node.get("NodeManagerHostname"))
        for node in nodes
        if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) > 0
    }


def _node_name(ip: Any, host: Any) -> str:
    return f"{ip} ({host})" if host else str(ip)


def no_cpu_left(
    waiting: list[Any], describe: Callable[[Any], str], wait_s: float, gone: list[str]
) -> ExecutorError:
    """The error that ends a run when no node of the cluster has a CPU left."""
    first = f"; the first held {describe(waiting[0])}" if waiting else ""
    nodes = f", {', '.join(gone)}," if gone else ""
    return ExecutorError(
        f"Ray has no node with a CPU left to run the batches on (the worker nodes{nodes} went "
        f"away {wait_s:g} s ago or more and none came back); {len(waiting)} batches were "
        f"waiting{first}",
        hint=f"{_RESUME}, once a node with CPUs has joined the cluster (ray start --address "
        "HEAD:PORT), or without RAY_ADDRESS on this machine; --ray-node-wait SECONDS (or "
        f"{WAIT_FOREVER}) waits longer for one",
    )


# Why Ray lost a batch, in words, by the type of its error (others: the type and first line)
_LOST_BECAUSE = {
    "WorkerCrashedError": "the worker process running it died (it crashed, or was killed: by "
    "the system for lack of memory, or by a signal)",
    "OutOfMemoryError": "Ray killed the worker running it: its node was running out of memory",
    "_KilledOverAndOver": "Ray killed the worker running it each time and would have run it "
    "again without end, which it does for a worker its memory monitor killed: its node was "
    "running out of memory",
    "NodeDiedError": "the node running it died or could not be reached",
    "LocalRayletDiedError": "the Ray process of the node running it died",
}
_RESUME = "what finished is kept: run the same command again to resume"
#: How a lost batch's error says that Ray did not tell which node ran it.
UNKNOWN_NODE = "on a node Ray did not name"


def lost_batch(
    error: BaseException, what: str, retries: int, node: str | None = None
) -> ExecutorError:
    """The error that ends a run whose batch Ray could not finish, after ``retries`` retries:
    on which node (``node``, as :func:`on_node` names it; None: Ray did not say), why (in
    words), which work, and what to do."""
    name = type(error).__name__
    first = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    why = _LOST_BECAUSE.get(name) or f"{name}: {first or 'no detail given'}"
    if name in ("OutOfMemoryError", "_KilledOverAndOver"):
        hint = f"give the workers more memory, or use a smaller --ray-batch-size; {_RESUME}"
    else:
        hint = (
            f"{_RESUME} (if one record brings the worker down, a smaller --ray-batch-size "
            "narrows down which)"
        )
    tried = f"after {retries} retries" if retries else "(not retried)"
    where = UNKNOWN_NODE if node is None else f"on Ray node {node}"
    message = f"Ray lost a batch {tried} {where}: {why}; the batch held {what}"
    return ExecutorError(message, hint=hint)


def _where_store() -> Any:
    """Ray's key-value store of the cluster (in its GCS, which outlives any worker node)."""
    return importlib.import_module("ray.experimental.internal_kv")


def _note_start(key: str, node: str) -> None:
    """Note in the cluster's store that the task of ``key`` runs on ``node``, and count its
    start (one key per start, so the driver reads every batch's count in one listing). No
    lock is needed: Ray runs a task's attempts one after another."""
    with contextlib.suppress(Exception):  # notes for an error: lost, the error says less
        store = _where_store()
        store._internal_kv_put(f"{key}/node", node, namespace=_WHERE_NAMESPACE)
        earlier = store._internal_kv_list(f"{key}/start/", namespace=_WHERE_NAMESPACE)
        start = f"{key}/start/{len(earlier) + 1}"
        store._internal_kv_put(start, "", overwrite=True, namespace=_WHERE_NAMESPACE)


def _starts(run: str) -> Counter[str]:
    """How many times each batch of ``run`` still noted has started, by its key (a batch
    with no count is absent: no run is ended on a count not read)."""
    try:
        noted = _where_store()._internal_kv_list(f"{run}/", namespace=_WHERE_NAMESPACE)
    except Exception:
        return Counter()
    return Counter(key.decode().partition("/start/")[0] for key in noted if b"/start/" in key)


def _where(key: str) -> str | None:
    """The node the task of ``key`` last ran on, as it noted it; None when it did not."""
    try:
        found = _where_store()._internal_kv_get(f"{key}/node", namespace=_WHERE_NAMESPACE)
    except Exception:  # the error is then said without the node
        return None
    return found.decode() if found else None


def _forget(prefix: str) -> None:
    """Drop the notes of a batch (``run/N/``) or of a whole ray_map call (``run/``): left
    behind, they are a few bytes each in the GCS, and a run's listing would read them."""
    with contextlib.suppress(Exception):
        _where_store()._internal_kv_del(prefix, del_by_prefix=True, namespace=_WHERE_NAMESPACE)


def span(kind: str, names: list[str]) -> str:
    """A batch's work for :func:`lost_batch`: ``100 records, v0 to v99``."""
    if len(names) == 1:
        return f"1 {kind}, {names[0]}"
    return f"{len(names)} {kind}s, {names[0]} to {names[-1]}"


def _on_a_node(
    function: Callable[[T, C], R], batch: T, context: C, driver_node: str, where_key: str
) -> R:
    """``function(batch, context)`` on a worker, which first notes its node under
    ``where_key`` (for the error on a lost batch); an error raised on another node than the
    driver's (``driver_node``) names that node: a path or a variable it names is that node's,
    and may well be fine on the driver's."""
    ray = ray_module()
    node = f"{ray.util.get_node_ip_address()} ({socket.gethostname()})"
    _note_start(where_key, node)
    try:
        return function(batch, context)
    except Exception as error:
        if ray.get_runtime_context().get_node_id() == driver_node:
            raise
        named = on_node(error, node)
        if isinstance(error, AssayError):
            raise named from None  # its message and hint say it all
        raise named from error  # the worker's traceback, for --debug


def on_node(error: Exception, node: str) -> AssayError:
    """``error``, raised on the Ray node ``node``, with the node named in its message; a file
    the node could not open becomes a setting error naming the path and what to do, and any
    other error that is not assay's an :class:`ExecutorError` with its type and first line."""
    where = f"on Ray node {node}"
    if isinstance(error, AssayError):
        error.message = f"{where}: {error.message}"
        error.args = (error.message,)
        return error
    if isinstance(error, OSError) and error.filename is not None:
        path = error.filename if error.filename2 is None else error.filename2
        return ConfigError(
            f"{where}: {path}: {error.strerror or type(error).__name__}",
            hint="a worker opens this path on its own node: it must exist there, readable "
            "and writable by the user the node's Ray runs as (relative paths are taken from "
            "the driver's working directory), or give a path that is",
        )
    return ExecutorError(
        f"{where}: a worker failed: {_first_line(error)}",
        hint=f"{_RESUME} (rerun with --debug for the worker's traceback)",
    )


def _first_line(error: BaseException) -> str:
    """``TYPE: first line of the message`` (the type alone when it has none)."""
    text = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def worker_error(error: Any) -> BaseException:
    """The exception a worker raised, as the driver raises it again.

    Ray's error carries the worker's whole traceback, coloured, in its message; the cause is
    the exception itself (an assay error with its message and hint, unpickled). Raised from
    the Ray error, the worker's traceback is still there for ``--debug``.
    """
    cause = getattr(error, "cause", None)
    if isinstance(cause, Exception) and not _is_ray_error(cause):
        return cause
    # a cause Ray could not send back (not picklable): its type and first line, no traceback
    text = str(cause) if cause is not None else ""
    first = next((line for line in text.splitlines() if line.strip()), "a worker failed")
    return RuntimeError(f"a Ray worker failed: {first.strip()}")


def _is_ray_error(error: BaseException) -> bool:
    return type(error).__module__.startswith("ray.")


def add_usage(total: dict[str, dict[str, Any]], part: dict[str, dict[str, Any]]) -> None:
    """Sum one worker's per-model usage counts into ``total`` (latency percentiles do not
    add up and are left out)."""
    for name, usage in part.items():
        _add_counts(total.setdefault(name, {}), usage)


def _add_counts(into: dict[str, Any], part: Mapping[str, Any]) -> None:
    """Sum the counts of ``part`` into ``into``, also those of a table of counts (errors by
    kind, replies by served model name): the run log needs them summed over every worker."""
    for key, value in part.items():
        if _is_count(value):
            into[key] = into.get(key, 0) + value
        elif isinstance(value, Mapping) and value and all(map(_is_count, value.values())):
            _add_counts(into.setdefault(key, {}), value)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
