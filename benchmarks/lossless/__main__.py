import sys

from benchmarks.lossless.run import main

sys.exit(main())
