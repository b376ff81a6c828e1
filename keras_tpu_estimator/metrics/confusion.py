"""Counts of a binary confusion matrix, and precision and recall from them.

Labels and predictions are cast to bool, as in TF1: any nonzero value is
positive (predictions are not thresholded at 0.5).
"""

import functools

import keras

from keras_tpu_estimator.metrics.arguments import bool_pair
from keras_tpu_estimator.metrics.pairs import weighted_pair


def _confusion_count(fn_name, metric_class, labels, predictions, weights):
    labels, predictions, sample_weight = bool_pair(fn_name, labels, predictions, weights)
    return weighted_pair(
        functools.partial(metric_class, name=fn_name), labels, predictions,
        sample_weight=sample_weight,
    )


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """`true_positives / (true_positives + false_positives)`.

    As in TF1, labels and predictions are cast to bool: any nonzero value is
    positive (predictions are not thresholded at 0.5). 0 when nothing was
    predicted positive.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Precision`.
    """
    return _confusion_count("precision", keras.metrics.Precision, labels, predictions, weights)


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """`true_positives / (true_positives + false_negatives)`, bool-cast inputs.

    Returns:
        A `MetricPair` (TF1's `(value, update_op)`) streaming a `keras.metrics.Recall`.
    """
    return _confusion_count("recall", keras.metrics.Recall, labels, predictions, weights)


def true_positives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """Weighted count of elements where both labels and predictions are nonzero."""
    return _confusion_count("true_positives", keras.metrics.TruePositives,
                            labels, predictions, weights)


def false_positives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """Weighted count of elements where labels are 0 and predictions nonzero."""
    return _confusion_count("false_positives", keras.metrics.FalsePositives,
                            labels, predictions, weights)


def true_negatives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """Weighted count of elements where both labels and predictions are 0."""
    return _confusion_count("true_negatives", keras.metrics.TrueNegatives,
                            labels, predictions, weights)


def false_negatives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """Weighted count of elements where labels are nonzero and predictions 0."""
    return _confusion_count("false_negatives", keras.metrics.FalseNegatives,
                            labels, predictions, weights)

