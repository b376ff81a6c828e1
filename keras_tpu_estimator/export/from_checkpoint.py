"""Exporting a checkpoint of a `model_dir`, as `TPUEstimator.export_saved_model` does.

`export_checkpoint` checks the estimator's export arguments before anything
is built (`check_api_version` and `check_strip_default_attrs` check the
constructor's and `export_savedmodel`'s), picks the serving platforms (`serving_platforms`), and exports the
PREDICT model with the checkpoint's weights, loaded once `model_fn`'s
PREDICT layers exist.

```python
path = export_checkpoint(model, checkpoints, "exports", receiver_fn, use_tpu=True)
```
"""

from keras_tpu_estimator.checkpoint import checkpoint_prefix
from keras_tpu_estimator.export.saved_model import export_saved_model
from keras_tpu_estimator.spec import ModeKeys


class ExportSavedModelApiVersion:
    """The `export_saved_model_api_version` values of `TPUEstimator`.

    Both export the same graph: `model_fn` is one XLA program for every
    platform, and `kte.export.inference_on_tpu` (V2) runs its computation
    in it.

    Attributes:
        V1: TPUEstimator's first export API (the default).
        V2: the export API of `inference_on_tpu`.

    Example:

    ```python
    kte.TPUEstimator(..., export_saved_model_api_version=kte.ExportSavedModelApiVersion.V2)
    ```
    """

    V1 = 1
    V2 = 2


def check_api_version(version):
    """Checks an `export_saved_model_api_version`.

    Args:
        version: `ExportSavedModelApiVersion.V1` or `V2` (1 or 2).

    Raises:
        ValueError: for anything else.

    Example:

    ```python
    check_api_version(ExportSavedModelApiVersion.V2)   # fine
    ```
    """
    if version not in (1, 2):
        raise ValueError(
            "`export_saved_model_api_version` must be "
            "ExportSavedModelApiVersion.V1 or V2 (1 or 2). Received: "
            f"{version!r}"
        )


def check_strip_default_attrs(strip_default_attrs):
    """Checks `export_savedmodel`'s `strip_default_attrs`, kept for compatibility.

    TensorFlow 2's SavedModel writer always strips default-valued
    attributes, so the value changes nothing.

    Args:
        strip_default_attrs: a bool.

    Raises:
        ValueError: for anything but a bool.

    Example:

    ```python
    check_strip_default_attrs(True)   # fine
    ```
    """
    if not isinstance(strip_default_attrs, bool):
        raise ValueError(
            "`strip_default_attrs` must be a bool. Received: "
            f"strip_default_attrs={strip_default_attrs!r}"
        )


def serving_platforms(export_to_cpu=True, export_to_tpu=True, use_tpu=True):
    """The platforms a serving program is compiled for, as an estimator asks.

    Args:
        export_to_cpu: compile for the CPU.
        export_to_tpu: compile for the TPU too, when `use_tpu`.
        use_tpu: whether the estimator runs on the TPU.

    Returns:
        A tuple of `"cpu"` and/or `"tpu"`.

    Raises:
        ValueError: if both `export_to_cpu` and `export_to_tpu` are False,
            or nothing is left to export (`export_to_cpu=False` without
            `use_tpu`).

    Example:

    ```python
    serving_platforms(export_to_cpu=True, export_to_tpu=True, use_tpu=False)  # ("cpu",)
    ```
    """
    if not export_to_cpu and not export_to_tpu:
        raise ValueError("One of export_to_cpu and export_to_tpu must be true.")
    platforms = (("cpu",) if export_to_cpu else ()) + (
        ("tpu",) if export_to_tpu and use_tpu else ()
    )
    if not platforms:
        raise ValueError(
            "export_to_cpu=False with use_tpu=False leaves nothing to export: "
            "export_to_tpu needs use_tpu=True."
        )
    return platforms


def export_checkpoint(
    model,
    checkpoints,
    export_dir_base,
    serving_input_receiver_fn,
    checkpoint_path=None,
    assets_extra=None,
    as_text=False,
    export_to_cpu=True,
    export_to_tpu=True,
    use_tpu=True,
    mode=ModeKeys.PREDICT,
):
    """Exports a checkpoint of `checkpoints` as a timestamped SavedModel.

    Args:
        model: the PREDICT `EstimatorModel` to export with.
        checkpoints: the `kte.checkpoint.ModelDirCheckpoints` of the
            `model_dir`; it loads the checkpoint into `model`.
        export_dir_base: the directory the `<timestamp>` export goes in.
        serving_input_receiver_fn: a function of no arguments returning a
            `ServingInputReceiver` or `TensorServingInputReceiver`.
        checkpoint_path: the checkpoint to export: a prefix
            (`model.ckpt-1000`, `model.ckpt-best`) or a model_dir, as
            `checkpoint_prefix` takes; default the latest.
        assets_extra: a dict of destination path (under `assets.extra/`)
            to source file.
        as_text: write `saved_model.pbtxt` instead of `saved_model.pb`.
        export_to_cpu: as `serving_platforms`'s.
        export_to_tpu: as `serving_platforms`'s.
        use_tpu: as `serving_platforms`'s.
        mode: only `ModeKeys.PREDICT` is supported.

    Returns:
        The export directory, as bytes: `b"<export_dir_base>/<timestamp>"`.

    Raises:
        ValueError: for another `mode`, no checkpoint, a `checkpoint_path`
            that names no checkpoint, no platform to export for, or an
            invalid argument (all checked before anything is written).

    Example:

    ```python
    path = export_checkpoint(model, checkpoints, "exports", receiver_fn)
    ```
    """
    if mode != ModeKeys.PREDICT:
        raise ValueError(
            "`experimental_mode` must be ModeKeys.PREDICT: only serving "
            f"graphs are exported. Received: experimental_mode={mode!r}"
        )
    platforms = serving_platforms(export_to_cpu, export_to_tpu, use_tpu)
    if checkpoint_path is None:
        if checkpoints.latest_checkpoint() is None:
            raise ValueError(
                f"Couldn't find trained model at {checkpoints.directory.directory}."
            )
        prefix = None  # The latest when it is read (a trainer may delete this one).
    else:
        prefix = checkpoint_prefix(checkpoint_path)  # Fails now on a path that is no checkpoint.

    def restore():
        checkpoints.forget(model)  # The PREDICT build may add variables.
        return checkpoints.load(model, prefix)

    return export_saved_model(
        model,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=assets_extra,
        as_text=as_text,
        platforms=platforms,
        restore=restore,
    )
