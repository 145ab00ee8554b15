"""The verifier benchmark: generate -> verify -> revise on grounded QA with citations."""
