import sys

from torchsync_lint.cli.command import main

sys.exit(main())
