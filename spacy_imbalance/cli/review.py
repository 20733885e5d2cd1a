import webbrowser
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..review.server import ReviewPageError, ReviewServer, StoreError, default_port, page_key, serve
from ._app import app, fail


@app.command("review")
def review_cli(
    path: Path = typer.Argument(..., metavar="AUDIT", help="An audit's output folder (its review.html) or a review page"),
    port: Optional[int] = typer.Option(
        None, "--port", help="Port on 127.0.0.1 (default: one derived from the page, the same every time; 0: any free port)"
    ),
    browser: bool = typer.Option(True, "--browser/--no-browser", help="Open the page in the default browser"),
) -> None:
    """Serve an audit's review page on this machine and save every decision
    next to it as you go (review-<key>.jsonl for apply-review, and the page's
    state, read back when the page opens again). Stop with Ctrl+C."""
    page = path / "review.html" if path.is_dir() else path
    if not page.is_file():
        fail(f"{path}: no review page there (an audit writes review.html into its output folder)")
    if port is not None and not 0 <= port <= 65535:
        fail(f"--port must be 0 (any free port) or 1-65535, got {port}")
    try:
        key = page_key(page)
    except ReviewPageError as err:
        fail(str(err))
    server = _listen(page, default_port(key) if port is None else port, chosen=port is not None)
    _say_repairs(server)
    msg.good(f"Reviewing {page} at {server.page_url}")
    msg.text(
        f"Decisions are saved to {server.jsonl_path} as you go. The address holds a token: the server answers no "
        "one without it (another user of this machine, another page). Ctrl+C stops the server."
    )
    if browser:
        webbrowser.open(server.page_url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()  # at once: a save in progress finished, open connections dropped
    jsonl = server.jsonl_path
    if jsonl.is_file() and jsonl.stat().st_size:
        msg.info(f"Stopped after {server.saves:,} saves; the decisions are in {jsonl}")
    else:
        msg.info("Stopped; no decision is kept (none made, or all undone)")


def _say_repairs(server: ReviewServer) -> None:
    """What the start mended after a save that was cut short."""
    store = server.store
    if store.rewritten:
        msg.warn(
            f"{store.jsonl_path} was not the decisions of {store.state_path} (revision {store.revision}; a save was "
            "cut short): written again from it"
        )
    if store.removed:
        msg.info(f"Removed {store.removed} temporary file(s) of saves cut short, beside {server.page}")


def _listen(page: Path, port: int, chosen: bool) -> ReviewServer:
    try:
        return serve(page, port=port)
    except (ReviewPageError, StoreError) as err:  # another server keeps this page; its files are no files
        fail(str(err))
    except OSError as err:
        if chosen:
            fail(f"--port {port}: cannot listen there ({err.strerror or err})")
        msg.warn(
            f"The page's own port {port} is in use ({err.strerror or err}): serving on another one. The decisions on disk "
            "are read either way; those the browser kept under the usual port stay with it."
        )
    try:
        return serve(page, port=0)
    except (ReviewPageError, StoreError) as err:
        fail(str(err))
    except OSError as err:
        fail(f"no port to listen on at 127.0.0.1 ({err.strerror or err})")
