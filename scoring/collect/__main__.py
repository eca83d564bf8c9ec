"""python -m scoring.collect: see scoring.collect.cli."""

import sys

from scoring.collect.cli import main

if __name__ == "__main__":
    sys.exit(main())
