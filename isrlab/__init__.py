"""isrlab: a formal model and property-testing suite for Apache Kafka's replication protocol.

The layers, each importing only the ones before it:
``isrlab.model`` (the executable Kafka 2.4 replica manager) <- ``isrlab.properties``
(invariants and engines) <- ``isrlab.specs`` (z3) <- ``isrlab.cli`` and the Spark driver.
"""

__version__ = "0.1.0"
