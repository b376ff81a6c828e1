"""The command line: `keras-tpu-estimator convert SRC -o OUT`, as tf_upgrade_v2 users expect.

SRC is a file or a directory. A file is converted into OUT, or into
`OUT/<its name>` when OUT is an existing directory (or ends with `/`), as
`cp` does. A directory is converted as one program into OUT (which must not
exist, nor be inside SRC), with its other files copied. `--inplace` converts
SRC where it is. The report goes to standard output and, with
`--report FILE`, to FILE. The exit status is 0 when nothing is left to
convert by hand, 1 when ERRORs remain (their count is printed last), 2 when
the arguments or files are wrong: then one `error:` line names the argument,
its value and what it may be, and nothing is written.
"""

import argparse
import os
import sys

from keras_tpu_estimator.convert import files

_DESCRIPTION = "Convert a TensorFlow 1 TPUEstimator program (a file or a tree) to keras_tpu_estimator."


def _add_arguments(parser):
    parser.add_argument("input_path", help="the TF1 program: a .py file or a directory")
    parser.add_argument("-o", "--output",
                        help="where to write the converted file (a file, or an existing "
                        "directory to write it into) or tree (a new directory)")
    parser.add_argument("--inplace", action="store_true",
                        help="convert the input where it is (no --output)")
    parser.add_argument("--report", help="also write the report to this file")
    return parser


def _check(args):
    """Raises ValueError, naming the argument, for arguments that cannot work."""
    if args.inplace and args.output:
        raise ValueError(f"Give --output or --inplace, not both. Received: --output={args.output!r}")
    if not args.inplace and not args.output:
        raise ValueError("Give --output OUT (a new file or directory) or --inplace.")
    if args.report is not None:
        _check_writable_file("--report", args.report)
    if args.output is not None and os.path.exists(args.input_path):  # Else convert_file says so.
        if os.path.isdir(args.input_path):
            _check_output_tree(args.input_path, args.output)
        else:
            _check_output_file(args.input_path, args.output)


def _check_writable_file(argument, path):
    if os.path.isdir(path):
        raise ValueError(f"{argument} {path!r} is a directory: give a file name.")
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise ValueError(f"{argument} {path!r}: its directory {parent!r} does not exist.")


def _check_output_file(input_path, output):
    if output.endswith((os.sep, "/")) and not os.path.isdir(output):
        raise ValueError(f"-o {output!r} names a directory that does not exist: create it, "
                         "or give a file name.")
    target = files.output_file(input_path, output)
    _check_writable_file("-o", target)
    if os.path.exists(target) and os.path.samefile(target, input_path):
        raise ValueError(f"-o {output!r} would overwrite `input_path` {input_path!r}: use "
                         "--inplace to convert a file where it is, or give another file or "
                         "directory.")


def _check_output_tree(input_path, output):
    if os.path.isfile(output):
        raise ValueError(f"-o {output!r} is an existing file: a directory `input_path` is "
                         "converted into a new directory. Give a path that does not exist, "
                         "or use --inplace.")
    if os.path.exists(output):
        raise ValueError(f"-o {output!r} already exists: a directory `input_path` is converted "
                         "into a new directory. Give a path that does not exist, or use "
                         "--inplace.")
    if files.is_inside(output, input_path):
        raise ValueError(f"-o {output!r} is inside `input_path` {input_path!r}: the converted "
                         "tree cannot be written into the tree it is converted from. Give a "
                         "directory outside it.")


def _convert(args):
    source = args.input_path
    if os.path.isdir(source):
        output = None if args.inplace else args.output
        results = files.convert_tree(source, output)
        shown = output or source
        return [
            (os.path.join(source, rel), os.path.join(shown, rel), result)
            for rel, result in results.items()
        ]
    output = source if args.inplace else files.output_file(source, args.output)
    return [(source, output, files.convert_file(source, output))]


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
        try:
            with open(args.report, "w", encoding="utf-8") as f:
                f.write(report)
        except OSError as e:
            print(f"error: --report {args.report!r} cannot be written: {e.strerror}",
                  file=sys.stderr)
            return 2
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
