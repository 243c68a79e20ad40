"""Run the ``scarguard`` command: ``python -m scarguard demo``."""

import sys

from scarguard.cli import main

sys.exit(main())
