"""A BERT-style text classifier on a tiny config, a TPUEstimator program.

In the shape of BERT's `modeling.py`, `optimization.py` and `run_classifier.py`:
word/token-type/position embeddings from `tf.get_variable`, one
`variable_scope` per layer, layer norm from `tf.contrib.layers`, multi-head
self-attention, a pooled `[CLS]` output, and BERT's own
`AdamWeightDecayOptimizer` (a `tf.train.Optimizer` subclass) fed by
`tf.gradients` + `tf.clip_by_global_norm` under a linear warmup and a
polynomial decay of the global step, which the program increments itself.
Training writes `host_call` summaries. A first run writes a checkpoint; the
classifier run initializes its encoder from it with `init_from_checkpoint`
in a `scaffold_fn`, as BERT fine-tuning starts from a pre-trained model.

The task is synthetic and learnable: is the keyword token in the sentence?

`examples/tf1/bert_classifier.py` is the TensorFlow 1 original;
`examples/bert_classifier.py` is the converter's output, unedited:

    keras-tpu-estimator convert examples/tf1/bert_classifier.py -o examples/bert_classifier.py
    python examples/bert_classifier.py   # 300 + 300 steps: 1.000 eval accuracy (measured)
"""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import collections
import copy
import math
import re
import tempfile

import numpy as np
import keras_tpu_estimator as kte
import keras_tpu_estimator.compat.v1 as tf1
import tensorflow as tf

KEYWORD_ID = 3  # ids 0, 1, 2 are [PAD], [CLS], [SEP]


class BertConfig(object):
    """The hyperparameters of the encoder."""

    def __init__(
        self,
        vocab_size=32,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        max_position_embeddings=32,
        type_vocab_size=2,
        initializer_range=0.02,
    ):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range


# ---------------------------------------------------------------- modeling


def gelu(x):
    cdf = 0.5 * (1.0 + tf1.tanh((np.sqrt(2 / np.pi) * (x + 0.044715 * tf1.pow(x, 3)))))
    return x * cdf


def dropout(input_tensor, dropout_prob):
    if dropout_prob is None or dropout_prob == 0.0:
        return input_tensor
    return tf1.nn.dropout(input_tensor, 1.0 - dropout_prob)


def layer_norm(input_tensor, name=None):
    return tf1.contrib.layers.layer_norm(
        inputs=input_tensor, begin_norm_axis=-1, begin_params_axis=-1, scope=name
    )


def layer_norm_and_dropout(input_tensor, dropout_prob, name=None):
    return dropout(layer_norm(input_tensor, name), dropout_prob)


def create_initializer(initializer_range=0.02):
    return tf1.truncated_normal_initializer(stddev=initializer_range)


def get_shape_list(tensor):
    return list(tensor.shape)


def reshape_to_matrix(input_tensor):
    width = list(input_tensor.shape)[-1]
    return tf1.reshape(input_tensor, [-1, width])


def embedding_lookup(input_ids, vocab_size, embedding_size, initializer_range, word_embedding_name):
    embedding_table = tf1.get_variable(
        name=word_embedding_name,
        shape=[vocab_size, embedding_size],
        initializer=create_initializer(initializer_range),
    )
    # One-hot matmul: faster than a gather on TPUs for small vocabularies.
    one_hot_input_ids = tf1.one_hot(input_ids, depth=vocab_size)
    return tf1.matmul(one_hot_input_ids, embedding_table), embedding_table


def embedding_postprocessor(input_tensor, token_type_ids, config):
    batch_size, seq_length, width = get_shape_list(input_tensor)
    output = input_tensor
    token_type_table = tf1.get_variable(
        name="token_type_embeddings",
        shape=[config.type_vocab_size, width],
        initializer=create_initializer(config.initializer_range),
    )
    flat_token_type_ids = tf1.reshape(token_type_ids, [-1])
    one_hot_ids = tf1.one_hot(flat_token_type_ids, depth=config.type_vocab_size)
    token_type_embeddings = tf1.matmul(one_hot_ids, token_type_table)
    output += tf1.reshape(token_type_embeddings, [batch_size, seq_length, width])
    full_position_embeddings = tf1.get_variable(
        name="position_embeddings",
        shape=[config.max_position_embeddings, width],
        initializer=create_initializer(config.initializer_range),
    )
    position_embeddings = tf1.slice(full_position_embeddings, [0, 0], [seq_length, -1])
    output += tf1.expand_dims(position_embeddings, 0)
    return layer_norm_and_dropout(output, config.hidden_dropout_prob)


def create_attention_mask_from_input_mask(from_tensor, to_mask):
    batch_size, from_seq_length = get_shape_list(from_tensor)[:2]
    to_seq_length = get_shape_list(to_mask)[1]
    to_mask = tf1.cast(tf1.reshape(to_mask, [batch_size, 1, to_seq_length]), tf1.float32)
    broadcast_ones = tf1.ones(shape=[batch_size, from_seq_length, 1], dtype=tf1.float32)
    return broadcast_ones * to_mask


def attention_layer(layer_input, attention_mask, batch_size, seq_length, config):
    num_heads = config.num_attention_heads
    size_per_head = config.hidden_size // num_heads

    def transpose_for_scores(input_tensor):
        output = tf1.reshape(input_tensor, [batch_size, seq_length, num_heads, size_per_head])
        return tf1.transpose(output, [0, 2, 1, 3])

    def projection(name):
        return tf1.layers.dense(
            layer_input,
            num_heads * size_per_head,
            name=name,
            kernel_initializer=create_initializer(config.initializer_range),
        )

    query_layer = transpose_for_scores(projection("query"))
    key_layer = transpose_for_scores(projection("key"))
    value_layer = transpose_for_scores(projection("value"))

    attention_scores = tf1.matmul(query_layer, key_layer, transpose_b=True)
    attention_scores = tf1.multiply(attention_scores, 1.0 / math.sqrt(float(size_per_head)))
    # Masked positions get a large negative score before the softmax.
    adder = (1.0 - tf1.cast(tf1.expand_dims(attention_mask, axis=1), tf1.float32)) * -10000.0
    attention_probs = tf1.nn.softmax(attention_scores + adder)
    attention_probs = dropout(attention_probs, config.attention_probs_dropout_prob)

    context_layer = tf1.transpose(tf1.matmul(attention_probs, value_layer), [0, 2, 1, 3])
    return tf1.reshape(context_layer, [batch_size * seq_length, num_heads * size_per_head])


def transformer_model(input_tensor, attention_mask, config):
    batch_size, seq_length, hidden_size = get_shape_list(input_tensor)
    prev_output = reshape_to_matrix(input_tensor)
    for layer_idx in range(config.num_hidden_layers):
        with tf1.variable_scope("layer_%d" % layer_idx):
            layer_input = prev_output
            with tf1.variable_scope("attention"):
                with tf1.variable_scope("self"):
                    attention_output = attention_layer(
                        layer_input, attention_mask, batch_size, seq_length, config
                    )
                with tf1.variable_scope("output"):
                    attention_output = tf1.layers.dense(
                        attention_output,
                        hidden_size,
                        kernel_initializer=create_initializer(config.initializer_range),
                    )
                    attention_output = dropout(attention_output, config.hidden_dropout_prob)
                    attention_output = layer_norm(attention_output + layer_input)
            with tf1.variable_scope("intermediate"):
                intermediate_output = tf1.layers.dense(
                    attention_output,
                    config.intermediate_size,
                    activation=gelu,
                    kernel_initializer=create_initializer(config.initializer_range),
                )
            with tf1.variable_scope("output"):
                layer_output = tf1.layers.dense(
                    intermediate_output,
                    hidden_size,
                    kernel_initializer=create_initializer(config.initializer_range),
                )
                layer_output = dropout(layer_output, config.hidden_dropout_prob)
                prev_output = layer_norm(layer_output + attention_output)
    return tf1.reshape(prev_output, [batch_size, seq_length, hidden_size])


def bert_pooled_output(config, is_training, input_ids, input_mask, token_type_ids):
    """The BertModel: embeddings, encoder, and the pooled [CLS] vector."""
    config = copy.deepcopy(config)
    if not is_training:
        config.hidden_dropout_prob = 0.0
        config.attention_probs_dropout_prob = 0.0
    with tf1.variable_scope("bert"):
        with tf1.variable_scope("embeddings"):
            embedding_output, _ = embedding_lookup(
                input_ids,
                config.vocab_size,
                config.hidden_size,
                config.initializer_range,
                word_embedding_name="word_embeddings",
            )
            embedding_output = embedding_postprocessor(embedding_output, token_type_ids, config)
        with tf1.variable_scope("encoder"):
            attention_mask = create_attention_mask_from_input_mask(input_ids, input_mask)
            sequence_output = transformer_model(embedding_output, attention_mask, config)
        with tf1.variable_scope("pooler"):
            first_token_tensor = tf1.squeeze(sequence_output[:, 0:1, :], axis=1)
            return tf1.layers.dense(
                first_token_tensor,
                config.hidden_size,
                activation=tf1.tanh,
                kernel_initializer=create_initializer(config.initializer_range),
            )


def get_assignment_map_from_checkpoint(tvars, init_checkpoint):
    """Maps the checkpoint's variables onto the model's, by name."""
    name_to_variable = collections.OrderedDict()
    for var in tvars:
        name = var.name
        m = re.match("^(.*):\\d+$", name)
        if m is not None:
            name = m.group(1)
        name_to_variable[name] = var

    assignment_map = collections.OrderedDict()
    initialized_variable_names = {}
    for name, _ in kte.checkpoint.list_variables(init_checkpoint):
        if name not in name_to_variable:
            continue
        assignment_map[name] = name
        initialized_variable_names[name] = 1
        initialized_variable_names[name + ":0"] = 1
    return assignment_map, initialized_variable_names


# ------------------------------------------------------------ optimization


class AdamWeightDecayOptimizer(tf1.train.Optimizer):
    """A basic Adam optimizer that includes "correct" L2 weight decay."""

    def __init__(
        self,
        learning_rate,
        weight_decay_rate=0.0,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        exclude_from_weight_decay=None,
        name="AdamWeightDecayOptimizer",
    ):
        super(AdamWeightDecayOptimizer, self).__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.exclude_from_weight_decay = exclude_from_weight_decay

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = self._get_variable_name(param.name)
            m = tf1.get_variable(
                name=param_name + "/adam_m",
                shape=list(param.shape),
                dtype=tf1.float32,
                trainable=False,
                initializer=tf1.zeros_initializer(),
            )
            v = tf1.get_variable(
                name=param_name + "/adam_v",
                shape=list(param.shape),
                dtype=tf1.float32,
                trainable=False,
                initializer=tf1.zeros_initializer(),
            )
            next_m = tf1.multiply(self.beta_1, m) + tf1.multiply(1.0 - self.beta_1, grad)
            next_v = tf1.multiply(self.beta_2, v) + tf1.multiply(1.0 - self.beta_2, tf1.square(grad))
            update = next_m / (tf1.sqrt(next_v) + self.epsilon)
            if self._do_use_weight_decay(param_name):
                update += self.weight_decay_rate * param
            next_param = param - self.learning_rate * update
            assignments.extend([param.assign(next_param), m.assign(next_m), v.assign(next_v)])
        return tf1.group(*assignments, name=name)

    def _do_use_weight_decay(self, param_name):
        if not self.weight_decay_rate:
            return False
        for r in self.exclude_from_weight_decay or []:
            if re.search(r, param_name) is not None:
                return False
        return True

    def _get_variable_name(self, param_name):
        m = re.match("^(.*):\\d+$", param_name)
        if m is not None:
            param_name = m.group(1)
        return param_name


def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps, use_tpu):
    """BERT's optimizer: warmup, linear decay, clipping; returns (train_op, lr)."""
    global_step = tf1.train.get_or_create_global_step()
    learning_rate = tf1.constant(value=init_lr, shape=[], dtype=tf1.float32)
    learning_rate = tf1.train.polynomial_decay(
        learning_rate, global_step, num_train_steps, end_learning_rate=0.0, power=1.0, cycle=False
    )
    if num_warmup_steps:
        global_steps_int = tf1.cast(global_step, tf1.int32)
        warmup_steps_int = tf1.constant(num_warmup_steps, dtype=tf1.int32)
        global_steps_float = tf1.cast(global_steps_int, tf1.float32)
        warmup_steps_float = tf1.cast(warmup_steps_int, tf1.float32)
        warmup_learning_rate = init_lr * global_steps_float / warmup_steps_float
        is_warmup = tf1.cast(global_steps_int < warmup_steps_int, tf1.float32)
        learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * warmup_learning_rate

    optimizer = AdamWeightDecayOptimizer(
        learning_rate=learning_rate,
        weight_decay_rate=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
    )
    if use_tpu:
        optimizer = tf1.tpu.CrossShardOptimizer(optimizer)

    tvars = tf1.trainable_variables()
    grads = tf1.gradients(loss, tvars)
    (grads, _) = tf1.clip_by_global_norm(grads, clip_norm=1.0)
    train_op = optimizer.apply_gradients(list(zip(grads, tvars)), global_step=global_step)
    # AdamWeightDecayOptimizer does not increment the global step itself.
    new_global_step = global_step + 1
    train_op = tf1.group(train_op, [global_step.assign(new_global_step)])
    return train_op, learning_rate


# -------------------------------------------------------------- classifier


def create_model(config, is_training, input_ids, input_mask, segment_ids, labels, num_labels):
    output_layer = bert_pooled_output(config, is_training, input_ids, input_mask, segment_ids)
    hidden_size = list(output_layer.shape)[-1]
    output_weights = tf1.get_variable(
        "output_weights", [num_labels, hidden_size], initializer=tf1.truncated_normal_initializer(stddev=0.02)
    )
    output_bias = tf1.get_variable("output_bias", [num_labels], initializer=tf1.zeros_initializer())
    with tf1.variable_scope("loss"):
        if is_training:
            output_layer = tf1.nn.dropout(output_layer, keep_prob=0.9)
        logits = tf1.matmul(output_layer, output_weights, transpose_b=True)
        logits = tf1.nn.bias_add(logits, output_bias)
        probabilities = tf1.nn.softmax(logits, axis=-1)
        log_probs = tf1.nn.log_softmax(logits, axis=-1)
        one_hot_labels = tf1.one_hot(labels, depth=num_labels, dtype=tf1.float32)
        per_example_loss = -tf1.reduce_sum(one_hot_labels * log_probs, axis=-1)
        loss = tf1.reduce_mean(per_example_loss)
        return loss, per_example_loss, logits, probabilities


def model_fn_builder(config, num_labels, init_checkpoint, learning_rate, num_train_steps,
                     num_warmup_steps, use_tpu, model_dir):
    """Returns the model_fn closure for TPUEstimator."""

    def model_fn(features, labels, mode, params):
        input_ids = features["input_ids"]
        input_mask = features["input_mask"]
        segment_ids = features["segment_ids"]
        label_ids = features["label_ids"]
        is_training = mode == kte.ModeKeys.TRAIN

        total_loss, per_example_loss, logits, probabilities = create_model(
            config, is_training, input_ids, input_mask, segment_ids,
            label_ids, num_labels,
        )

        tvars = tf1.trainable_variables()
        scaffold_fn = None
        if init_checkpoint:
            assignment_map, _ = get_assignment_map_from_checkpoint(tvars, init_checkpoint)
            if use_tpu:

                def tpu_scaffold():
                    tf1.train.init_from_checkpoint(init_checkpoint, assignment_map)
                    return tf1.train.Scaffold()

                scaffold_fn = tpu_scaffold
            else:
                tf1.train.init_from_checkpoint(init_checkpoint, assignment_map)

        if mode == kte.ModeKeys.TRAIN:
            train_op, lr = create_optimizer(
                total_loss, learning_rate, num_train_steps, num_warmup_steps, use_tpu
            )

            def host_call_fn(global_step, loss, lr):
                # Host calls receive every tensor with a leading batch dimension.
                global_step = global_step[0]
                with tf1.contrib.summary.create_file_writer(model_dir).as_default():
                    with tf1.contrib.summary.always_record_summaries():
                        tf1.contrib.summary.scalar("loss", loss[0], step=global_step)
                        tf1.contrib.summary.scalar("learning_rate", lr[0], step=global_step)
                        return tf1.contrib.summary.all_summary_ops()

            global_step = tf1.reshape(tf1.train.get_global_step(), [1])
            host_call = (host_call_fn, [global_step, tf1.reshape(total_loss, [1]), tf1.reshape(lr, [1])])
            return kte.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=scaffold_fn,
                host_call=host_call,
            )
        if mode == kte.ModeKeys.EVAL:

            def metric_fn(per_example_loss, label_ids, logits):
                predictions = tf1.argmax(logits, axis=-1, output_type=tf1.int32)
                accuracy = tf1.metrics.accuracy(labels=label_ids, predictions=predictions)
                loss = tf1.metrics.mean(values=per_example_loss)
                return {"eval_accuracy": accuracy, "eval_loss": loss}

            return kte.TPUEstimatorSpec(
                mode=mode, loss=total_loss, scaffold_fn=scaffold_fn,
                eval_metrics=(metric_fn, [per_example_loss, label_ids, logits]),
            )
        return kte.TPUEstimatorSpec(
            mode=mode, predictions={"probabilities": probabilities}, scaffold_fn=scaffold_fn
        )

    return model_fn


# ------------------------------------------------------------------- data


def make_examples(num_examples, seq_length, vocab_size, seed):
    """Sentences of random words; half contain KEYWORD_ID (label 1)."""
    rng = np.random.RandomState(seed)
    input_ids = np.zeros([num_examples, seq_length], np.int32)
    input_mask = np.zeros([num_examples, seq_length], np.int32)
    labels = rng.randint(0, 2, size=num_examples).astype(np.int32)
    for i in range(num_examples):
        length = rng.randint(4, seq_length - 1)
        words = rng.randint(KEYWORD_ID + 1, vocab_size, size=length)
        if labels[i]:
            words[rng.randint(length)] = KEYWORD_ID
        input_ids[i, : length + 2] = np.concatenate([[1], words, [2]])
        input_mask[i, : length + 2] = 1
    return {
        "input_ids": input_ids,
        "input_mask": input_mask,
        "segment_ids": np.zeros_like(input_ids),
        "label_ids": labels,
    }


def input_fn_builder(features, is_training, drop_remainder):
    def input_fn(params):
        batch_size = params["batch_size"]
        d = tf.data.Dataset.from_tensor_slices(
            {name: tf.constant(value, dtype=tf.int32) for name, value in features.items()}
        )
        if is_training:
            d = d.repeat()
            d = d.shuffle(buffer_size=1000, seed=0)
        return d.batch(batch_size=batch_size, drop_remainder=drop_remainder)

    return input_fn


def train(config, model_dir, train_features, train_steps, init_checkpoint, batch_size,
          learning_rate):
    """Trains a classifier (initialized from init_checkpoint if given); returns the estimator."""
    run_config = kte.RunConfig(
        model_dir=model_dir,
        save_checkpoints_steps=train_steps,
        tpu_config=kte.TPUConfig(iterations_per_loop=50),
    )
    model_fn = model_fn_builder(
        config,
        num_labels=2,
        init_checkpoint=init_checkpoint,
        learning_rate=learning_rate,
        num_train_steps=train_steps,
        num_warmup_steps=int(0.1 * train_steps),
        use_tpu=True,
        model_dir=model_dir,
    )
    estimator = kte.TPUEstimator(
        use_tpu=True,
        model_fn=model_fn,
        config=run_config,
        train_batch_size=batch_size,
        eval_batch_size=batch_size,
    )
    estimator.train(input_fn=input_fn_builder(train_features, True, True), max_steps=train_steps)
    return estimator


def main(work_dir=None, pretrain_steps=300, train_steps=300, batch_size=32, learning_rate=1e-3):
    """Writes a first checkpoint, fine-tunes from it, and returns the eval results."""
    work_dir = work_dir or tempfile.mkdtemp(prefix="bert_classifier_")
    config = BertConfig()
    train_features = make_examples(2048, 16, config.vocab_size, seed=0)
    eval_features = make_examples(512, 16, config.vocab_size, seed=1)
    train(config, work_dir + "/pretrain", train_features, pretrain_steps, None, batch_size,
          learning_rate)
    init_checkpoint = tf1.train.latest_checkpoint(work_dir + "/pretrain")
    tf1.logging.info("initializing from %s", init_checkpoint)
    estimator = train(config, work_dir + "/classifier", train_features, train_steps,
                      init_checkpoint, batch_size, learning_rate)
    results = estimator.evaluate(input_fn=input_fn_builder(eval_features, False, False))
    print("eval accuracy: %.4f" % results["eval_accuracy"])
    return results


if __name__ == "__main__":
    tf1.logging.set_verbosity(tf1.logging.INFO)
    main()
