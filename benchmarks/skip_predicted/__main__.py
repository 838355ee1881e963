import sys

from benchmarks.skip_predicted.run import main

sys.exit(main())
