"""Running gfxrt in a browser tab: the local server and headless Chromium driver the browser test
tier uses (tests/test_browser.py; docs/browser.md)."""
