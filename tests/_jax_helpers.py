"""Helpers shared by the JAX runtime tests (imported after conftest has set the device count)."""


def run_steps(trainer, batches, n=3):
    """Run ``n`` training steps from a fresh state; returns (state, [loss per step])."""
    from shardplan.jax.data import shard_batch

    state = trainer.init_state()
    losses = []
    for i in range(n):
        state, met = trainer.step(state, shard_batch(batches.batch(i), trainer.mesh))
        losses.append(float(met["loss"]))
    return state, losses
