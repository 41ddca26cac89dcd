"""`python -m recall_sqlite.synapt ARGS...` = `recall-sqlite synapt ARGS...` (the form the
activated session-start hook uses to start synapt's detached catch-up worker)."""

from __future__ import annotations

import sys

from .cli import main_synapt

if __name__ == "__main__":
    sys.exit(main_synapt(sys.argv[1:]))
