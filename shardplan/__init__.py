"""shardplan: a parallelism planner and JAX runtime for transformer training."""

__version__ = "0.1.0"
