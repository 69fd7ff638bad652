"""Breaker pass 53b (the launch-script reader rewritten in pass 53): each test fails on the behaviour the pass found
(noted in its comment)."""

from __future__ import annotations

import time

import pytest

from shardplan.errors import ConfigError
from shardplan.export import import_config

M = ("--num-layers 16 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 "
     "--global-batch-size 64 --bf16")
RUN = "torchrun --nproc_per_node 8 pretrain_gpt.py"


def _layout(script: str, devices: int | None = None) -> tuple[int, int, int]:
    imp = import_config("megatron", script, devices=devices)
    return imp.devices, imp.parallel.tp, imp.parallel.pp


def test_uncalled_functions_set_nothing():
    # a preset function never called set tp 8 / pp 4 and an 80-layer model (bash runs the called one's tp 1 / pp 1)
    script = ("llama2_7b() {\n  NLAYERS=32; TP=1; PP=1\n}\nllama2_70b() {\n  NLAYERS=80; TP=8; PP=4\n}\nllama2_7b\n"
              f"{RUN} {M.replace('--num-layers 16', '--num-layers $NLAYERS')} --tensor-model-parallel-size $TP "
              "--pipeline-model-parallel-size $PP")
    imp = import_config("megatron", script)
    assert (imp.parallel.tp, imp.parallel.pp, imp.model_shape["n_layers"]) == (1, 1, 32)
    # a usage() that is never called
    assert _layout(f"TP=2\nusage() {{\n  TP=8\n  exit 1\n}}\n{RUN} {M} --tensor-model-parallel-size $TP")[1] == 2


def test_heredoc_text_naming_the_entry_point_is_not_the_run():
    # "Runs: torchrun pretrain_gpt.py with --tensor-model-parallel-size 8" in a usage heredoc gave tp 8
    script = (f"cat <<USAGE >&2\nRuns: torchrun pretrain_gpt.py with --tensor-model-parallel-size 8 by default\nUSAGE\n"
              f"{RUN} {M} --pipeline-model-parallel-size 2")
    assert _layout(script) == (8, 1, 2)


def test_nested_and_indexed_arrays():
    # ALL=("${PAR[@]}" ...) lost PAR's pp 2; ${PAR[0]} ${PAR[1]} dropped tp 2
    script = (f"PAR=(--pipeline-model-parallel-size 2)\nALL=(\"${{PAR[@]}}\" {M})\nPAR+=(--tensor-model-parallel-size 4)\n"
              f'{RUN} "${{ALL[@]}}"')
    assert _layout(script) == (8, 1, 2)
    script = f"PAR=(--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4)\n{RUN} ${{PAR[0]}} ${{PAR[1]}} {M}"
    assert _layout(script) == (8, 2, 1)


def test_undecided_tests_read_the_default_run_with_a_note():
    # an if/else on a variable the script never sets merged both branches (tp 4 with pp 2: neither runs that)
    script = (f'if [ "$USE_PP" = "1" ]; then\n  {RUN} {M} --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2\n'
              f"else\n  {RUN} {M} --tensor-model-parallel-size 4 --sequence-parallel\nfi\n")
    imp = import_config("megatron", script)
    assert (imp.parallel.tp, imp.parallel.pp) == (4, 1) and any("USE_PP" in n for n in imp.notes)


def test_eval_and_non_running_mentions_of_the_entry_point():
    # eval "${run_cmd}" was "not a Megatron-LM launch script"
    script = (f'opts="--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 {M}"\n'
              'run_cmd="torchrun --nproc_per_node 8 pretrain_qwen.py ${opts}"\necho ${run_cmd}\neval "${run_cmd}"\n')
    assert _layout(script) == (8, 4, 2)
    # ls / [ -f ... ] / cp naming pretrain_gpt.py hid the real launcher (whose script path is a variable)
    for pre in ("cd $MEGATRON_PATH && ls pretrain_gpt.py", '[ -f "$MEGATRON_PATH/pretrain_gpt.py" ] || exit 1',
                "cp ${MEGATRON_PATH}/pretrain_gpt.py ./work/pretrain_gpt.py --tensor-model-parallel-size 1"):
        script = f"{pre}\ntorchrun --nproc_per_node 8 $TRAIN {M} --tensor-model-parallel-size 4 --sequence-parallel"
        assert _layout(script)[1] == 4, pre


def test_a_huge_launch_line_is_refused_fast():
    # a 1 MiB line of 60,000 unknown flags took 80 s (argparse is quadratic in the unknown flags)
    script = f"{RUN} {M} " + " ".join(f"--foo{i} {i}" for i in range(60_000))
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="legal: at most 5,000"):
        import_config("megatron", script)
    assert time.perf_counter() - start < 10


def test_slurm_node_count_takes_the_devices_given():
    # NNODES=${SLURM_NNODES:-"1"} with -n 16 was refused as disagreeing with --nnodes 1
    script = (f'NNODES=${{SLURM_NNODES:-"1"}}\ntorchrun --nproc_per_node 8 --nnodes $NNODES pretrain_gpt.py {M} '
              "--tensor-model-parallel-size 2")
    imp = import_config("megatron", script, devices=16)
    assert imp.devices == 16 and imp.parallel.dp == 8 and any("comes from Slurm" in n for n in imp.notes)
    assert import_config("megatron", script).devices == 8  # without --devices: the default run's one node


def test_read_r_marks_every_name():
    # read -r TP PP <<< "4 2" took TP as -r's argument: "a variable the script does not set"
    with pytest.raises(ConfigError, match="TP holds a value the script computes"):
        import_config("megatron", f'read -r TP PP <<< "4 2"\n{RUN} {M} --tensor-model-parallel-size $TP')


def test_moe_imbalance_without_expert_parallelism():
    # --moe-imbalance 20 at ep 1 was priced 4x slower (one rank holds every expert: its load is the mean)
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    kw = dict(model="mixtral-8x7b", hardware="h100-sxm", devices=64, seq_len=4096, global_batch=64,
              global_batch_tokens=None, zero_stage=1, tp=4, sp=True, pp=4, cp=4)
    with pytest.raises(ConfigError, match="with ep=1: one rank holds all 8 experts"):
        build_inputs(**kw, moe_imbalance=20)
    # a search prices every layout with the imbalance held to its bound: ep 1 as balanced
    m, hw, tr, pc = build_inputs(**kw)
    base = estimate(m, hw, tr, pc, 64).step_s
    assert estimate(m, hw, tr.model_copy(update={"moe_imbalance": 20.0}), pc, 64).step_s == base


def test_torchtitan_backend_of_the_wrong_type_names_the_field():
    text = ("[parallelism]\ndata_parallel_shard_degree = 8\nexpert_parallel_degree = 8\n"
            'expert_parallel_comm_backend = ["deepep"]\n[training]\nlocal_batch_size = 1\n')
    with pytest.raises(ConfigError, match="expert_parallel_comm_backend"):
        import_config("torchtitan", text, devices=8)
