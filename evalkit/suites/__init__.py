"""Suites built on the harness: public benchmarks imported as scenarios (BEIR, LoCoMo) and the
mutation suite (system variants that prove the gate catches real search bugs)."""
