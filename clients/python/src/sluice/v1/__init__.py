"""Generated messages (``*_pb2``, with ``.pyi`` stubs) and gRPC stubs (``*_pb2_grpc``)
of the ``sluice.v1`` API. Regenerate with ``scripts/clients.sh generate-python``."""
