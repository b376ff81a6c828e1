"""The `model_fn` side: how a `model_fn` is called and what it builds.

Holds `call` (arguments by name, the spec checked), `store` (layers and
variables by scope path), `layer_capture` (Keras layers `model_fn` constructs),
`initialization` (the build pass, initial values) and `train_ops` (a TF1
`train_op` run in a compiled step). May import `spec`, `config` and
`_keras_internals`; never `engine`, `inputs`, `model` or `estimator`.
"""
