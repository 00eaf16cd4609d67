"""Python client of Sluice, the scheduling-decision service.

``SluiceClient`` wraps the generated gRPC stubs; ``node``, ``queue``, ``job``,
``task`` and ``delete`` build deltas; ``outcomes`` splits a committed plan's decisions;
decisions and job outcomes name tasks and jobs with ``TaskRef``/``JobRef`` (namespace and
name), which ``full_name`` shows as "namespace/name";
``error_reason`` gives a failed call's reason (``"PLAN_EXPIRED"``, ...); the generated
messages are in ``sluice.v1`` (``types_pb2``, ``cluster_state_pb2``, ``scheduler_pb2``,
``errors_pb2``). ``SluiceClient(target, endpoints=[...])`` follows the leader of a
replicated server (``LeaderChannel``; ``leader_of`` reads a ``NOT_LEADER`` error)::

    from sluice import SluiceClient, node, job, task

    with SluiceClient("127.0.0.1:50051", cluster="demo") as c:
        c.apply([node("n1", {"cpu": "8", "memory": "32Gi"}), job("j", min_available=1),
                 task("j-0", "j", {"cpu": "1"})], replace_all=True)
        plan = c.schedule()
        applied = c.commit(plan).applied
"""

from sluice.client import SluiceClient, binds, delete, full_name, job, node, outcomes, queue, task
from sluice.errors import ERROR_DOMAIN, error_info, error_reason
from sluice.leader import LeaderChannel, leader_of

__all__ = [
    "ERROR_DOMAIN",
    "LeaderChannel",
    "SluiceClient",
    "binds",
    "delete",
    "error_info",
    "error_reason",
    "full_name",
    "job",
    "leader_of",
    "node",
    "outcomes",
    "queue",
    "task",
]
__version__ = "0.1.0"
