"""`python -m bench [--quick] [--out DIR] [--only NAMES] [--peers LIST]`: see bench/cli.py."""
import sys

from .cli import main

sys.exit(main())
