import sys

from embconf.cli import main

sys.exit(main())
