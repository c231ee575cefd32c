"""`python -m evalkit` runs the CLI."""

import sys

from evalkit.cli import main

sys.exit(main())
