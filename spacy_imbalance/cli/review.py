import webbrowser
from pathlib import Path

import typer
from wasabi import msg

from ..review.server import ReviewPageError, serve
from ._app import app, fail


@app.command("review")
def review_cli(
    path: Path = typer.Argument(..., metavar="AUDIT", help="An audit's output folder (its review.html) or a review page"),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: any free port)"),
    browser: bool = typer.Option(True, "--browser/--no-browser", help="Open the page in the default browser"),
) -> None:
    """Serve an audit's review page on this machine and save every decision
    next to it as you go (review-<key>.jsonl for apply-review, and the page's
    state, read back when the page opens again). Stop with Ctrl+C."""
    page = path / "review.html" if path.is_dir() else path
    if not page.is_file():
        fail(f"{path}: no review page there (an audit writes review.html into its output folder)")
    if not 0 <= port <= 65535:
        fail(f"--port must be 0 (any free port) or 1-65535, got {port}")
    try:
        server = serve(page, port=port)
    except ReviewPageError as err:
        fail(str(err))
    except OSError as err:
        fail(f"--port {port}: cannot listen there ({err.strerror or err})")
    msg.good(f"Reviewing {page} at {server.url}")
    msg.text(f"Decisions are saved to {server.jsonl_path} as you go. Ctrl+C stops the server.")
    if browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    msg.info(f"Stopped after {server.saves:,} saves; the decisions are in {server.jsonl_path}" if server.jsonl_path.is_file()
             else "Stopped; no decision was made")
