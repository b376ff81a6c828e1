"""The TF1 API census as a benchmark: what the converter still cannot convert in real code.

Converts whole public source trees with `keras_tpu_estimator.convert` (in
memory: nothing is written) and counts the ERROR lines of the report by the
TensorFlow name each one names, as `../shared/corpus/census/census.py` does
with the command line. Prints per tree the files, the ERROR lines and the
names left, then the lines per family (`tf.contrib.slim`, `tf.summary`, ...)
beside a baseline census when one is given.

The trees are the census README's (fetch the repositories at the commits it
names; the trees are never stored in this repository):

    python benchmarks/bench_census.py tpu=TPU_CHECKOUT/models \\
        albert=ALBERT_CHECKOUT bert=BERT_CHECKOUT \\
        [--baseline ../shared/corpus/census/census_2026-11-26.json] [--json OUT]

A tree that is not present is skipped with a note.
"""

import argparse
import collections
import json
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# The families of the census, longest prefix first.
FAMILIES = (
    "from tensorflow.contrib", "tf.contrib.slim", "tf.contrib.layers", "tf.contrib.framework",
    "tf.contrib.training", "tf.contrib.image", "tf.contrib.keras", "tf.contrib.metrics",
    "tf.contrib.rnn", "tf.contrib", "tf.summary", "tf.layers", "tf.tpu", "tf.py_func",
    "tf.feature_column", "tf.estimator", "tf.train", "tf.nn", "tf.Session", "tf.placeholder",
)


def family(name):
    """The census family of a TF name (`tf.contrib.slim.conv2d` -> `tf.contrib.slim`)."""
    for prefix in FAMILIES:
        if name == prefix or name.startswith(prefix + ".") or name.startswith(prefix + " "):
            return prefix
    return ".".join(name.split(".")[:2])


def error_name(message):
    """The TF name an ERROR message is about: its first quoted name, call stripped."""
    quoted = re.findall(r"'([^']+)'", message)
    return re.sub(r"\(.*", "", quoted[0]) if quoted else message[:60]


def census(tree):
    """`(python files, Counter {TF name: ERROR lines})` of one source tree."""
    from keras_tpu_estimator.convert import convert_sources
    from keras_tpu_estimator.convert import files as files_lib

    files = files_lib._python_files(tree)
    sources, paths = {}, {}
    for rel, path in files.items():
        try:
            with open(path, encoding="utf-8") as f:
                sources[files_lib.module_key(rel)] = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        paths[files_lib.module_key(rel)] = path
    counts = collections.Counter()
    for result in convert_sources(sources, paths).values():
        for change in result.changes:
            if change.level == "ERROR":
                counts[error_name(change.message)] += 1
    return len(files), counts


def by_family(counts):
    out = collections.Counter()
    for name, n in counts.items():
        out[family(name)] += n
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", metavar="NAME=TREE")
    parser.add_argument("--baseline", help="a census.json ({tree: {name: count}}) to compare with")
    parser.add_argument("--json", help="write this census as JSON here")
    args = parser.parse_args(argv)
    baseline = {}
    if args.baseline:
        with open(args.baseline) as f:
            baseline = json.load(f)
    result = {}
    for spec in args.trees:
        name, _, tree = spec.partition("=")
        if not tree or not os.path.isdir(tree):
            print(f"{name}: skipped, no tree at {tree!r}")
            continue
        n_files, counts = census(tree)
        result[name] = dict(counts)
        before = next((v for k, v in baseline.items() if k.startswith(name)
                       or k.split("/")[-1].split("@")[0] == name), None)
        line = (f"{name}: {n_files} files, {sum(counts.values())} ERROR lines, "
                f"{len(counts)} names")
        if before is not None:
            line += f" (baseline {sum(before.values())} lines, {len(before)} names)"
        print(line)
        families, families_before = by_family(counts), by_family(before or {})
        for fam in sorted(set(families) | set(families_before),
                          key=lambda f: (-families_before.get(f, 0), -families.get(f, 0), f)):
            shown = f"    {fam:32s} {families.get(fam, 0):4d}"
            if before is not None:
                shown += f"   (baseline {families_before.get(fam, 0)})"
            print(shown)
        print("  names left:")
        for key, n in counts.most_common():
            print(f"    {n:4d}  {key}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
