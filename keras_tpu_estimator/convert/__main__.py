"""`python -m keras_tpu_estimator.convert SRC -o OUT`."""

import sys

from keras_tpu_estimator.convert.cli import main

sys.exit(main())
