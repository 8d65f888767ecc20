"""The ``ptxmm`` command the package puts on the PATH: the same command line as the Rust binary,
run in this process by the native module."""

import sys

from . import _native


def main() -> None:
    sys.exit(_native.main(["ptxmm", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
