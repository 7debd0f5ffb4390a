"""`python -m stim3d`: the same as the `stim3d` command."""

from stim3d.cli import main

raise SystemExit(main())
