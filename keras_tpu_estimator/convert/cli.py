"""The command line: `keras-tpu-estimator convert SRC -o OUT`, as tf_upgrade_v2 users expect.

SRC is a file or a directory. A directory is converted as one program into
OUT (which must not exist), with its other files copied; `--inplace`
converts SRC where it is. The report goes to standard output and, with
`--report FILE`, to FILE. The exit status is 0 when nothing is left to
convert by hand, 1 when ERRORs remain (their count is printed last), 2 when
the arguments or files are wrong (nothing is written then).
"""

import argparse
import os
import sys

from keras_tpu_estimator.convert import files

_DESCRIPTION = "Convert a TensorFlow 1 TPUEstimator program (a file or a tree) to keras_tpu_estimator."


def _add_arguments(parser):
    parser.add_argument("input", help="the TF1 program: a .py file or a directory")
    parser.add_argument("-o", "--output", help="where to write the converted file or tree")
    parser.add_argument("--inplace", action="store_true",
                        help="convert the input where it is (no --output)")
    parser.add_argument("--report", help="also write the report to this file")
    return parser


def _check(args):
    if args.inplace and args.output:
        raise ValueError(f"Give --output or --inplace, not both. Received: --output={args.output!r}")
    if not args.inplace and not args.output:
        raise ValueError("Give --output OUT (a new file or directory) or --inplace.")


def _convert(args):
    if os.path.isdir(args.input):
        output = None if args.inplace else args.output
        results = files.convert_tree(args.input, output)
        shown = output or args.input
        return [
            (os.path.join(args.input, rel), os.path.join(shown, rel), result)
            for rel, result in results.items()
        ]
    output = args.input if args.inplace else args.output
    return [(args.input, output, files.convert_file(args.input, output))]


def _run(args):
    try:
        _check(args)
        converted = _convert(args)
    except (OSError, ValueError, SyntaxError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    report = "".join(files.format_report(r, i, o) for i, o, r in converted)
    errors = sum(files.counts(r)["ERROR"] for _, _, r in converted)
    if len(converted) > 1:
        report += f"Converted {len(converted)} files: {errors} errors left to convert by hand\n"
    sys.stdout.write(report)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(report)
    if errors:
        print(f"{errors} errors remain: see the ERROR lines of the report", file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    """`python -m keras_tpu_estimator.convert SRC -o OUT [--inplace] [--report R]`."""
    parser = argparse.ArgumentParser(
        prog="python -m keras_tpu_estimator.convert", description=_DESCRIPTION
    )
    return _run(_add_arguments(parser).parse_args(argv))


def cli(argv=None):
    """`keras-tpu-estimator convert SRC -o OUT [--inplace] [--report R]`."""
    parser = argparse.ArgumentParser(prog="keras-tpu-estimator")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_arguments(commands.add_parser("convert", help=_DESCRIPTION, description=_DESCRIPTION))
    return _run(parser.parse_args(argv))
