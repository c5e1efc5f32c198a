"""Benchmarks, run by `make bench`. Each prints its figures and the ratios measured in the same run."""
