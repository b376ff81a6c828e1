"""Conformance: tensorflow/tpu `dcgan_main.py` (commit d2694ea), converted and run unedited.

A GAN in one `model_fn`: two `AdamOptimizer.minimize(var_list=...)` over each
network's global variables, input_fns returning `make_one_shot_iterator()`
tensors with `tf.random_normal` noise, rounds of train / evaluate / predict and
the start step read with `estimator._load_global_step_from_checkpoint_dir`.
"""

import pytest

import corpus_support as corpus

pytestmark = [corpus.requires_program("dcgan"), corpus.requires_imports("PIL")]

FLAGS = [
    "--dataset=mnist", "--use_tpu=False", "--batch_size=32", "--train_steps=200",
    "--train_steps_per_eval=100", "--iterations_per_loop=50", "--eval_loss=True",
]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    work = tmp_path_factory.mktemp("dcgan")
    source = corpus.CORPUS / "sources" / "tpu-d2694ea" / "models" / "experimental" / "dcgan"
    converted = corpus.convert_tree(source, work / "program")
    data = corpus.make_data("dcgan", work / "data")
    return work, converted, work / "program", data


def test_dcgan_converts_with_no_error_left(program):
    _, converted, _, _ = program
    assert corpus.error_lines(converted.stdout) == []


def test_dcgan_trains_evaluates_and_generates_unedited(program):
    work, _, program_dir, data = program
    result = corpus.run_driver(
        "dcgan", program_dir,
        [*FLAGS, "--mnist_train_data_file=%s" % (data / "train.tfrecords"),
         "--mnist_test_data_file=%s" % (data / "test.tfrecords"),
         "--model_dir=%s" % (work / "out")],
        work, DRIVER_REAL=data / "real_sample.npy", DRIVER_SEED=1,
    )
    assert result["status"] == "ok"
    # Two rounds of 100 steps: each evaluation at its step (one batch per step read).
    evaluations = result["summaries_eval"]["discriminator_loss"]
    assert [step for step, _ in evaluations] == [100, 200]
    reference = corpus.reference("dcgan")["summary"]
    # The eval losses of the last round within 10% of the original's (seeds 1, 2).
    for name in ("discriminator_loss", "generator_loss"):
        ours = result["summaries_eval"][name][-1][1]
        theirs = reference["eval"][name]
        assert 0.9 * min(theirs) <= ours <= 1.1 * max(theirs), (name, ours, theirs)
    # The generated grid is nearer the real digits than uniform noise is.
    check = result["sample_check"]
    assert check["gen_nn_dist_to_real"] < check["noise_nn_dist_to_real"] - 1.0, check
