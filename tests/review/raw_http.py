"""HTTP as bytes on a socket, for what urllib will not send (two Host
headers, an absolute target, a malformed Content-Length, a header byte at a
time) and to read exactly what the review server answers."""
import json
import re
import socket
from typing import Dict, Iterable, Optional, Tuple

STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([0-9]{3}) [^\r\n]*")


def request_bytes(method: str, target: str, headers: Iterable[Tuple[str, str]], body: bytes = b"", version: str = "HTTP/1.1") -> bytes:
    """A request as it goes on the wire; headers exactly as given (no
    Content-Length added)."""
    lines = [f"{method} {target} {version}", *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def exchange(address: Tuple[str, int], data: bytes, timeout: float = 10.0) -> bytes:
    """Sends ``data``, says it is all (half-close), and reads the answer to
    its end."""
    with socket.create_connection(address, timeout=timeout) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # answered and closed before all was sent: read what came
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def parse(response: bytes, head: bool = False) -> Tuple[int, Dict[str, str], bytes]:
    """(status, headers with lower-case names, body) of a well-formed answer:
    a status line, headers, and a body of exactly its Content-Length (none
    to a HEAD request, ``head``); AssertionError otherwise."""
    head, sep, body = response.partition(b"\r\n\r\n")
    assert sep, f"no end of headers in {response[:200]!r}"
    status_line, *lines = head.split(b"\r\n")
    match = STATUS_LINE.fullmatch(status_line)
    assert match, f"not a status line: {status_line[:200]!r}"
    headers = {}
    for line in lines:
        name, colon, value = line.partition(b":")
        assert colon, f"not a header: {line!r}"
        headers[name.decode("latin-1").strip().lower()] = value.decode("latin-1").strip()
    assert int(headers["content-length"]) == len(body) or (head and not body), (headers, body[:200])
    return int(match.group(1)), headers, body


def error_of(body: bytes) -> Optional[str]:
    return json.loads(body).get("error") if body else None
