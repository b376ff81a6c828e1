"""`tf.distribute.cluster_resolver.TPUClusterResolver`, as a local run sees it.

TPUEstimator programs build a resolver from the TPU's name, zone and project,
then ask it for the session master and hand it to `RunConfig(cluster=...)`.
JAX finds this machine's devices (TPU, GPU or CPU) itself, so the resolver
here needs none of those: it answers as TensorFlow's did for a local run.
The converter rewrites both TF1 spellings (`tf.contrib.cluster_resolver`,
`tf.distribute.cluster_resolver`) to it.

```python
resolver = tf1.distribute.cluster_resolver.TPUClusterResolver(FLAGS.tpu, zone=FLAGS.zone)
resolver.get_master()     # '': the local target
resolver.cluster_spec()   # an empty ClusterSpec
config = kte.RunConfig(cluster=resolver, model_dir=FLAGS.model_dir)
```
"""

import jax

_ACCELERATORS = {"tpu": "TPU", "gpu": "GPU"}


class ClusterSpec:
    """A cluster's jobs and task addresses, as `tf.train.ClusterSpec`: empty for a local run.

    Args:
        cluster: `{job name: [address, ...] or {task index: address}}`
            (default: no jobs).
    """

    def __init__(self, cluster=None):
        self._cluster = {}
        for job, tasks in dict(cluster or {}).items():
            if isinstance(tasks, dict):
                self._cluster[job] = dict(tasks)
            else:
                self._cluster[job] = dict(enumerate(tasks))

    @property
    def jobs(self):
        """The job names."""
        return list(self._cluster)

    def as_dict(self):
        """`{job name: [address, ...]}` (`{task index: address}` for sparse jobs)."""
        result = {}
        for job, tasks in self._cluster.items():
            dense = sorted(tasks) == list(range(len(tasks)))
            result[job] = [tasks[i] for i in sorted(tasks)] if dense else dict(tasks)
        return result

    def num_tasks(self, job_name):
        """The number of tasks of `job_name`."""
        return len(self._job(job_name))

    def task_indices(self, job_name):
        """The task indices of `job_name`, sorted."""
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        """The address of task `task_index` of `job_name`."""
        tasks = self._job(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}")
        return tasks[task_index]

    def _job(self, job_name):
        if job_name not in self._cluster:
            raise ValueError(f"No such job in cluster: {job_name!r}. Jobs: {self.jobs}")
        return self._cluster[job_name]

    def __bool__(self):
        return bool(self._cluster)

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and self.as_dict() == other.as_dict()

    def __repr__(self):
        return f"ClusterSpec({self.as_dict()!r})"


class TPUClusterResolver:
    """A TPU cluster resolver that answers as a local run does.

    The arguments of TensorFlow's resolver are accepted and kept, and
    change nothing: JAX finds this machine's devices itself.

    Args:
        tpu: the TPU's name or address (kept).
        zone: its zone (kept).
        project: its project (kept).
        job_name: the job name (default `"worker"`).
        **kwargs: TensorFlow's other arguments (`coordinator_name`,
            `credentials`, `service`, `discovery_url`, ...), kept.
    """

    def __init__(self, tpu=None, zone=None, project=None, job_name="worker", **kwargs):
        self.tpu, self.zone, self.project = tpu, zone, project
        self.job_name = job_name
        self.options = dict(kwargs)
        self.task_type, self.task_id, self.rpc_layer = job_name, 0, None
        self.environment = ""

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The session master: `""`, the local target."""
        return ""

    def get_master(self):
        """The session master: `""`, the local target."""
        return self.master()

    def get_job_name(self):
        """The job name given (default `"worker"`)."""
        return self.job_name

    def cluster_spec(self):
        """An empty `ClusterSpec`: the run is local."""
        return ClusterSpec()

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        """`{"TPU": n}` (or `{"GPU": n}`) for this process's devices; `{}` on CPU."""
        counts = {}
        for device in jax.local_devices():
            kind = _ACCELERATORS.get(device.platform)
            if kind:
                counts[kind] = counts.get(kind, 0) + 1
        return counts

    def __repr__(self):
        return f"TPUClusterResolver(tpu={self.tpu!r}) (local: JAX finds the devices)"
