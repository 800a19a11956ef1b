"""Drawing: gr.GUI (Taichi's ti.GUI) on wgpu's render pipelines, the off-screen frame every
drawing renders into (frame.py), the window that presents it (window.py), and image files
(png.py, imageio.py). docs/gui.md says how to use it."""
