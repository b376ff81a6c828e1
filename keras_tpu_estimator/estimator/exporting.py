"""`TPUEstimator.export_saved_model`: a checkpoint of `model_dir` as a SavedModel.

A mixin of `TPUEstimator`: the estimator's export methods, over
`export.export_checkpoint` with the estimator's PREDICT model, checkpoints
and `export_to_cpu`/`export_to_tpu`.
"""

from keras_tpu_estimator import export as export_lib
from keras_tpu_estimator.spec import ModeKeys


class Exporting:
    """The export methods of `TPUEstimator`."""

    def export_saved_model(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
        experimental_mode=ModeKeys.PREDICT,
    ):
        """Exports the given or latest checkpoint as a SavedModel for serving.

        `model_fn` runs in PREDICT mode on the features of the receiver;
        every `export_outputs` key becomes a signature, and
        `serving_default` is always there (the `predictions` without
        `export_outputs`). The variables hold the weights and
        `global_step`, not the optimizer's slots. The serving program is
        compiled for the CPU (`export_to_cpu`) and, with `use_tpu` and
        `export_to_tpu`, for the TPU too, in the one `serve` graph.

        Args:
            export_dir_base: the directory the export goes in, as a new
                `<unix timestamp>` subdirectory, written atomically.
            serving_input_receiver_fn: a function of no arguments returning
                a `kte.export.ServingInputReceiver` (see `kte.export`).
            assets_extra: a dict of destination path (under `assets.extra/`)
                to source file, copied into the export.
            as_text: write `saved_model.pbtxt` instead of `saved_model.pb`.
            checkpoint_path: the checkpoint to export, in either form
                `evaluate` takes; default the latest.
            experimental_mode: only `ModeKeys.PREDICT` is supported.

        Returns:
            The export directory, as bytes: `b"<export_dir_base>/<timestamp>"`.

        Raises:
            ValueError: with no checkpoint, an unsupported mode, both
                `export_to_cpu` and `export_to_tpu` False, or an invalid
                argument (checked before anything is written).

        Example:

        ```python
        receiver_fn = kte.export.build_parsing_serving_input_receiver_fn(
            {"x": tf.io.FixedLenFeature([4], tf.float32)})
        path = estimator.export_saved_model("exports", receiver_fn)
        tf.saved_model.load(path).signatures["serving_default"](examples=...)
        ```
        """
        return export_lib.export_checkpoint(
            self._model(ModeKeys.PREDICT),
            self._checkpoints,
            export_dir_base,
            serving_input_receiver_fn,
            checkpoint_path=checkpoint_path,
            assets_extra=assets_extra,
            as_text=as_text,
            export_to_cpu=self.export_to_cpu,
            export_to_tpu=self.export_to_tpu,
            use_tpu=self._use_tpu,
            mode=experimental_mode,
        )

    def export_savedmodel(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
        strip_default_attrs=False,
    ):
        """The former name of `export_saved_model`.

        `strip_default_attrs` is accepted for compatibility: TensorFlow 2's
        SavedModel writer always strips default-valued attributes.

        Returns:
            The export directory, as bytes.

        Raises:
            ValueError: as `export_saved_model`, or for a non-bool
                `strip_default_attrs`.
        """
        export_lib.check_strip_default_attrs(strip_default_attrs)
        return self.export_saved_model(
            export_dir_base,
            serving_input_receiver_fn,
            assets_extra=assets_extra,
            as_text=as_text,
            checkpoint_path=checkpoint_path,
        )
