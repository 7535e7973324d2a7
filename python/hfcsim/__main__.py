"""``python -m hfcsim`` = the ``hfcsim`` command."""

from hfcsim.cli import main

raise SystemExit(main())
