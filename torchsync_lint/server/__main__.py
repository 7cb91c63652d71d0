import sys

from torchsync_lint.server import main

sys.exit(main())
