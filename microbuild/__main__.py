import sys

from microbuild.cli import main

sys.exit(main())
