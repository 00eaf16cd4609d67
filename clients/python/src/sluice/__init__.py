"""Python client of Sluice, the scheduling-decision service.

``SluiceClient`` wraps the generated gRPC stubs; ``node``, ``queue``, ``job``,
``task`` and ``delete`` build deltas; the generated messages are in ``sluice.v1``
(``types_pb2``, ``cluster_state_pb2``, ``scheduler_pb2``)::

    from sluice import SluiceClient, node, job, task

    with SluiceClient("127.0.0.1:50051", cluster="demo") as c:
        c.apply([node("n1", {"cpu": "8", "memory": "32Gi"}), job("j", min_available=1),
                 task("j-0", "j", {"cpu": "1"})], replace_all=True)
        plan = c.schedule()
        applied = c.commit(plan).applied
"""

from sluice.client import SluiceClient, binds, delete, job, node, queue, task

__all__ = ["SluiceClient", "binds", "delete", "job", "node", "queue", "task"]
__version__ = "0.1.0"
