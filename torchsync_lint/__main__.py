import sys

from torchsync_lint.cli import main

sys.exit(main())
