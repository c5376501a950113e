"""``python -m kubesched.cli``: the ``kubesched`` command."""

from __future__ import annotations

import sys

from kubesched.cli import main

sys.exit(main())
