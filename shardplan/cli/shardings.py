"""``shardplan shardings``: where every parameter of a plan lives (JAX sharding rules, no devices)."""

from rich.table import Table

from shardplan.cli.common import BatchOpt, BatchTokOpt, ModelOpt, PlanOpt, SeqOpt, app, config_errors, console, \
    layout_flags, print_notes
from shardplan.cli.runtime import (PlanDevOpt, runtime_devices, DModelOpt, LayersOpt, PRuleOpt, PSpecOpt, RuleOpt, ScaleOpt,
                                   parse_param_overrides, parse_rule_overrides, runtime_inputs)


def _table(m, rules, rows: list[dict]) -> Table:
    mesh = " ".join(f"{a}={n}" for a, n in rules.sizes.items())
    t = Table(title=f"{m.name}: {rules.strategy} on mesh {mesh}",
              caption="bytes/device: elements x the stored dtype's bytes / shards (the runtime stores fp32 "
                      "parameters, 4 B each, whatever the compute dtype); opt: both Adam moments, fp32")
    for col in ("path", "shape", "logical axes", "PartitionSpec", "bytes/device", "opt-state spec",
                "opt bytes/device"):
        t.add_column(col, justify="right" if "bytes" in col else "left", no_wrap=col == "path")
    for r in rows:
        t.add_row(r["path"], "x".join(map(str, r["shape"])), ",".join(str(x) for x in r["logical"]) or "-",
                  r["spec"], f"{r['bytes_per_device']:,}", r["opt_spec"], f"{r['opt_bytes_per_device']:,}")
    t.add_row("[bold]total[/]", "", "", "", f"{sum(r['bytes_per_device'] for r in rows):,}", "",
              f"{sum(r['opt_bytes_per_device'] for r in rows):,}")
    return t


@app.command()
@config_errors
@layout_flags(profile_defaults=False)
def shardings(model: ModelOpt, devices: PlanDevOpt = None, seq_len: SeqOpt = 64, global_batch: BatchOpt = None,
              global_batch_tokens: BatchTokOpt = None, plan: PlanOpt = None, scale_down: ScaleOpt = False,
              scale_d_model: DModelOpt = 64, scale_layers: LayersOpt = 2, rule: RuleOpt = None,
              param_rule: PRuleOpt = None, param_spec: PSpecOpt = None, layout: dict = None) -> None:
    """Print the sharding table of a plan: path, shape, logical axes, PartitionSpec, bytes/device.

    Needs no devices: the mesh sizes come from the plan. The global batch defaults to one sequence
    per data rank and microbatch, pp microbatches (the table does not depend on it).
    """
    from shardplan.cli.common import need_jax_extra
    need_jax_extra("shardings")
    devices = runtime_devices(devices, plan)
    m, tr, pc = runtime_inputs(model, devices, seq_len, global_batch, global_batch_tokens, plan, layout,
                               (scale_down, scale_d_model, scale_layers), default_batch=True)
    from shardplan.cli.runtime import validate_runtime
    lay = validate_runtime(pc, m, tr, devices, global_batch is None and global_batch_tokens is None)
    print_notes(lay)
    from shardplan.cli.common import stages
    with stages("shardings", 2) as step:
        step("loading JAX")
        from shardplan.jax.pipeline import layout_params
        from shardplan.jax.rules import make_rules, param_shardings, sharding_rows
        step("building the parameter shapes and their shardings")
        from shardplan.parallel import padded_vocab
        # the runtime's vocabulary: padded to a multiple of tp as Trainer pads it (breaker pass 55: a vocabulary of
        # 128,257 at tp 8 was refused here while estimate, export and train pad it)
        m = m.model_copy(update={"vocab_size": padded_vocab(m.vocab_size, lay.parallel.tp, 1)})
        rules = make_rules(lay, m, parse_rule_overrides(rule), parse_param_overrides(param_rule, param_spec))
        # pp > 1: blocks under "stages" (pp, L_max, ...); 1F1B: embedding / head under "boundary" (pp, V, d)
        params, logical = layout_params(m, lay)
        rows = sharding_rows(param_shardings(params, logical, rules), rules.sizes)
    console.print(_table(m, rules, rows))
