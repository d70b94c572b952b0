"""A client of `kforge serve`'s completion judge (protocol kforge.rl/1, docs/rl.md).

One JSON object per line over a Unix socket or TCP. The first line is a hello (the protocol and, on
TCP, the bearer token); then each request line gets one reply line. Several servers may be named:
a batch is split between them and judged on all at once.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

PROTOCOL = "kforge.rl/1"


class JudgeError(RuntimeError):
    """The server refused a connection or a request, or could not be reached."""


class ConnectionLost(JudgeError):
    """The connection broke or the server closed it, and connecting again did not help."""


def _read_token(token: Optional[str], token_file: Optional[str]) -> Optional[str]:
    if token is not None:
        return token
    token_file = token_file or os.environ.get("KFORGE_TOKEN_FILE")
    if not token_file:
        return os.environ.get("KFORGE_TOKEN") or None
    with open(token_file, encoding="utf-8") as f:
        return f.read().strip()


def servers_in(folder: str) -> List[str]:
    """The addresses in the *.addr files of `folder` (what `kforge slurm serve` writes: one file per
    server, "HOST:PORT"), sorted by file name."""
    found = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".addr"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                line = f.readline().strip()
            if line:
                found.append(line)
    return found


def parse_servers(servers: Union[None, str, Sequence[str]]) -> List[str]:
    """Server addresses from a list, a comma-separated string, or $KFORGE_SERVERS.

    An address is a Unix socket path ("/run/judge.sock", "unix:/run/judge.sock"), TCP "HOST:PORT"
    ("tcp://node1:8765" too), or a folder of address files (`kforge slurm serve`'s DIR/servers),
    which stands for every server in it.
    """
    if servers is None:
        servers = os.environ.get("KFORGE_SERVERS", "")
    if isinstance(servers, str):
        servers = [s for s in (part.strip() for part in servers.split(",")) if s]
    expanded: List[str] = []
    for server in servers:
        if os.path.isdir(server):
            in_folder = servers_in(server)
            if not in_folder:
                raise JudgeError(f"{server}: no address file (*.addr) yet; are its servers running?")
            expanded.extend(in_folder)
        else:
            expanded.append(server)
    if not expanded:
        raise JudgeError("no kforge server named (pass servers=... or set KFORGE_SERVERS)")
    return expanded


class Connection:
    """One connection to one server: a hello, then one reply line per request line. Not thread-safe."""

    def __init__(self, address: str, token: Optional[str] = None, timeout: float = 900.0):
        self.address = address
        self._sock = self._connect(address, timeout)
        self._file = self._sock.makefile("rb")
        hello: Dict[str, Any] = {"protocol": PROTOCOL}
        if token:
            hello["token"] = token
        reply = self._exchange(hello)
        if not reply.get("ok"):
            self.close()
            raise JudgeError(f"{address}: {reply.get('message') or 'refused'}")
        self.about: Dict[str, Any] = reply.get("server", {})

    @staticmethod
    def _connect(address: str, timeout: float) -> socket.socket:
        path = address[len("unix:"):] if address.startswith("unix:") else None
        if path is None and (address.startswith("/") or address.startswith(".")):
            path = address
        try:
            if path is not None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(timeout)
                sock.connect(path)
                return sock
            hostport = address[len("tcp://"):] if address.startswith("tcp://") else address
            host, _, port = hostport.rpartition(":")
            if not host or not port.isdigit():
                raise JudgeError(f"{address}: expected a socket path or HOST:PORT")
            sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
            return sock
        except OSError as e:
            raise JudgeError(f"{address}: cannot connect ({e})") from e

    def _exchange(self, message: Dict[str, Any]) -> Dict[str, Any]:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
        try:
            self._sock.sendall(data)
            line = self._file.readline()
        except OSError as e:
            raise ConnectionLost(f"{self.address}: connection lost ({e})") from e
        if not line.endswith(b"\n"):
            raise ConnectionLost(f"{self.address}: the server closed the connection")
        return json.loads(line)

    def request(self, message: Dict[str, Any]) -> Dict[str, Any]:
        """The server's reply to `message`; JudgeError when it answers with an error."""
        reply = self._exchange(message)
        if "error" in reply:
            error = JudgeError(f"{self.address}: {reply['error']}")
            error.busy = bool(reply.get("busy"))  # type: ignore[attr-defined]
            raise error
        return reply

    def close(self) -> None:
        try:
            self._file.close()
        finally:
            self._sock.close()


class Client:
    """Judges completions on one or more kforge servers.

    servers: addresses (see parse_servers); token / token_file: the bearer token of TCP servers
    ($KFORGE_TOKEN_FILE, $KFORGE_TOKEN). Connections are opened on first use and kept, one per
    server and thread. Thread-safe.
    """

    def __init__(self, servers: Union[None, str, Sequence[str]] = None, token: Optional[str] = None,
                 token_file: Optional[str] = None, timeout: float = 900.0, busy_retries: int = 20):
        self.servers = parse_servers(servers)
        self._token = _read_token(token, token_file)
        self._timeout = timeout
        self._busy_retries = busy_retries
        self._local = threading.local()
        self._lock = threading.Lock()
        self._opened: List[Connection] = []
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self.servers)))
        #: Completions each server judged, by address (how the work was split).
        self.judged_by: Dict[str, int] = {s: 0 for s in self.servers}

    def _connection(self, address: str) -> Connection:
        connections = getattr(self._local, "connections", None)
        if connections is None:
            connections = self._local.connections = {}
        if address not in connections:
            connections[address] = Connection(address, self._token, self._timeout)
            with self._lock:
                self._opened.append(connections[address])
        return connections[address]

    def _drop(self, address: str) -> None:
        """Closes and forgets this thread's connection to `address`, if it has one."""
        connection = getattr(self._local, "connections", {}).pop(address, None)
        if connection is not None:
            connection.close()

    def _request(self, address: str, message: Dict[str, Any]) -> Dict[str, Any]:
        reconnected, busy = False, 0
        while True:
            try:
                return self._connection(address).request(message)
            except ConnectionLost:
                self._drop(address)
                if reconnected:
                    raise
                # A server that closed an idle connection, or was restarted: connect again, once. A
                # request is judged the same whenever it is sent, so sending it again is safe.
                reconnected = True
            except JudgeError as e:
                if not getattr(e, "busy", False) or busy >= self._busy_retries:
                    raise
                time.sleep(min(5.0, 0.1 * 2 ** busy))  # the server is full: back off and retry
                busy += 1

    def about(self, server: Optional[str] = None) -> Dict[str, Any]:
        """The hello reply's description of a server (compile_only, limits, task count)."""
        return self._connection(server or self.servers[0]).about

    def stats(self) -> Dict[str, Dict[str, int]]:
        """Each server's counts: {"in_flight", "judged", "abandoned"} by address."""
        return {address: self._request(address, {"op": "stats"}) for address in self.servers}

    def tasks(self) -> List[Dict[str, Any]]:
        """The tasks of the first server: [{"id", "level", "tags"}]."""
        return self._request(self.servers[0], {"op": "tasks"})["tasks"]

    def prompt(self, task: str, protocol: str = "text") -> Dict[str, Any]:
        """generate's opening messages for `task`: {"messages": [system, user], "tools": [...]}."""
        return self._request(self.servers[0], {"op": "prompt", "task": task, "protocol": protocol})

    def _judge_on(self, address: str, entries: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        about = self._connection(address).about
        max_count = int(about.get("max_batch", 512))
        max_bytes = int(about.get("max_request_bytes", 64 << 20)) * 9 // 10
        results: List[Dict[str, Any]] = []
        chunk: List[Dict[str, Any]] = []
        size = 0

        def send() -> None:
            results.extend(self._request(address, {"op": "judge", "batch": chunk})["results"])
            with self._lock:
                self.judged_by[address] += len(chunk)

        for entry in entries:  # requests of at most max_batch entries and max_request_bytes
            entry_size = len(json.dumps(entry, ensure_ascii=False).encode("utf-8", "surrogatepass")) + 1
            if chunk and (len(chunk) >= max_count or size + entry_size > max_bytes):
                send()
                chunk, size = [], 0
            chunk.append(entry)
            size += entry_size
        if chunk:
            send()
        return results

    def judge(self, batch: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """Results for `batch`, in its order.

        Each entry is {"task": ID, "completion": TEXT | MESSAGE | [MESSAGES]} with optional "id" and
        "protocol" ("text" or "tools"). Each result has status, compiled, correct, speedup, sol_pct,
        suspect_timing, components, reward, done and feedback (docs/rl.md). The batch is dealt
        round-robin to the servers, which judge their shares at once.
        """
        entries = [dict(e) for e in batch]
        for i, e in enumerate(entries):
            e.setdefault("id", str(i))
        if not entries:
            return []
        n = len(self.servers)
        shares = [list(range(k, len(entries), n)) for k in range(n)]
        futures = [self._pool.submit(self._judge_on, self.servers[k], [entries[i] for i in shares[k]])
                   for k in range(n) if shares[k]]
        results: List[Optional[Dict[str, Any]]] = [None] * len(entries)
        for k, future in enumerate(futures):
            for i, result in zip(shares[k], future.result()):
                results[i] = result
        return results  # type: ignore[return-value]

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local = threading.local()


def judge(batch: Iterable[Dict[str, Any]], servers: Union[None, str, Sequence[str]] = None,
          **client_args: Any) -> List[Dict[str, Any]]:
    """Judges `batch` with a client made for the call (see Client.judge)."""
    client = Client(servers, **client_args)
    try:
        return client.judge(batch)
    finally:
        client.close()
