import sys

from benchmarks.thorough.run import main

sys.exit(main())
