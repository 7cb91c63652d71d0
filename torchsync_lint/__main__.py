import sys

from torchsync_lint.cli.entry import main

sys.exit(main())
