"""Which of Taichi's example programs form the corpus, and why the others do not.

Rule: every program under taichi/examples that runs headless, i.e. makes progress without a
window or a person (GUI and GGUI calls go to the headless stand-ins), needs no file or
network it does not ship with, and is not a second copy of another example. Left out, each
with its reason:
"""
from fnmatch import fnmatch
from pathlib import Path

EXCLUDED = [
    ("patterns.py", "a module the examples import, not a program"),
    ("real_func/*", "second copies of five examples, written with the experimental `ti.real_func`"),
    ("features/gui/*", "demonstrates the window itself (keys, widgets, fullscreen, image files)"),
    ("features/io/*", "demonstrates writing mesh / PLY / video files (`ti.tools` exporters)"),
    ("rendering/taichi_ngp.py", "downloads a pretrained model from the network"),
    ("algorithm/circle-packing/*", "needs OpenCV (cv2) to read its image"),
]

# fewer frames for a program whose frame takes minutes on a CPU driver (lavapipe): one path-traced image
FRAMES = {"rendering/sdf_renderer.py": 1}


def frames_for(rel: str, frames: int) -> int:
    return min(frames, FRAMES.get(rel, frames))


def select(root: Path):
    """(programs, [(program, reason)]) with paths relative to the examples root, sorted."""
    programs, skipped = [], []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        if "__pycache__" in rel:
            continue
        why = next((r for pat, r in EXCLUDED if fnmatch(rel, pat)), None)
        if why:
            skipped.append((rel, why))
        else:
            programs.append(rel)
    return programs, skipped
