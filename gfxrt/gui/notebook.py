"""Frames inline in a Jupyter notebook (IPython.display): gr.GUI's show() without a window, and
gr.tools.imshow, display the frame as a PNG image; a GUI updates one image in place."""
from __future__ import annotations

from gfxrt.compiler.npcompat import np

from .png import encode_png


def in_notebook() -> bool:
    """Running under an IPython kernel (a notebook), not a plain interpreter."""
    try:
        shell = get_ipython()  # noqa: F821 (IPython's builtin)
    except NameError:
        return False
    return shell is not None and type(shell).__name__ != "TerminalInteractiveShell"


class InlineFrame:
    """One image in the notebook's output, replaced by each `show(pixels)`."""

    def __init__(self):
        self.handle = None

    def show(self, pixels: np.ndarray) -> None:
        import IPython.display
        image = IPython.display.Image(data=encode_png(pixels))
        if self.handle is None:
            self.handle = IPython.display.display(image, display_id=True)
        else:
            self.handle.update(image)
