"""A progress bar on stderr: rich when installed, else tqdm, else one line per case."""
from __future__ import annotations

import sys


class Progress:
    """`with Progress(total) as p: p.describe(text); p.advance(key); p.note(line)`."""

    def __init__(self, total: int):
        self.total = total
        self.n = 0
        self._bar = None
        self._task = None
        self._kind = "plain"

    def __enter__(self):
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress
            self._bar = RichProgress(TextColumn("[bold]bench[/]"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TextColumn("{task.description}"),
                                     console=Console(stderr=True), transient=False)
            self._bar.__enter__()
            self._task = self._bar.add_task("", total=self.total)
            self._kind = "rich"
        except ImportError:
            try:
                from tqdm import tqdm
                self._bar = tqdm(total=self.total, file=sys.stderr, unit="case")
                self._kind = "tqdm"
            except ImportError:
                pass
        return self

    def __exit__(self, *exc):
        if self._kind == "rich":
            self._bar.__exit__(*exc)
        elif self._kind == "tqdm":
            self._bar.close()

    def describe(self, text: str) -> None:
        """Show what is running now."""
        if self._kind == "rich":
            self._bar.update(self._task, description=text)
        elif self._kind == "tqdm":
            self._bar.set_description_str(text)
        else:
            print(f"[{self.n + 1}/{self.total}] {text}", file=sys.stderr, flush=True)

    def advance(self, key: str) -> None:
        """One more case done."""
        self.n += 1
        if self._kind == "rich":
            self._bar.advance(self._task)
        elif self._kind == "tqdm":
            self._bar.update(1)

    def note(self, line: str) -> None:
        """Print a line above the bar."""
        if self._kind == "rich":
            self._bar.console.print(line)
        elif self._kind == "tqdm":
            self._bar.write(line)
        else:
            print(line, file=sys.stderr, flush=True)
