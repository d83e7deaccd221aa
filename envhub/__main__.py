import sys

from envhub.cli import main

sys.exit(main())
