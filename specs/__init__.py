"""z3 specifications of the protocol (timing bounds, inductive invariants), tied back to the model."""
