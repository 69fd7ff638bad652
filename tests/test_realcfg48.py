"""Forty-eighth session: a launch script's if / elif / else branches are chosen by its own values (they were all read,
the last assignment winning), and the shell tests that decide them."""

import pytest

from shardplan.errors import ConfigError

from shardplan.export import import_config
from shardplan.export.base import expand_variables, shell_condition

#: the branch structure of ROCm/Megatron-LM examples/mixtral/train_mixtral_moe.sh, cut to the lines the importer
#: reads: the precision, recompute, virtual-pipeline and model-size branches and the sp test
MIXTRAL_ROCM = '#!/bin/bash\nGPUS_PER_NODE=`python3 -c "import torch; print(torch.cuda.device_count())"`\nRUN_ENV="${RUN_ENV:-cluster}"\nif [ $RUN_ENV = cluster ]; then\nNNODES="${NNODES:-1}"\nelif [ $RUN_ENV = slurm ]; then\nNNODES=$SLURM_NNODES\nfi\nMODEL_SIZE=${MODEL_SIZE:-"8x7B"}\nTP_SIZE=${TP_SIZE:-8}\nPP_SIZE=${PP_SIZE:-1}\nEP_SIZE=${EP_SIZE:-8}\nSP=${SP:-true}\nGBS=${GBS:-64}\nMBS=${MBS:-4}\nSEQLEN=${SEQLEN:-4096}\nPR=${PR:-bf16} # bf16, fp16, fp8\nif [ $PR = fp16 ]; then\n    pr_options=(\n        --fp16\n            --apply-query-key-layer-scaling)\nelif [ $PR = bf16 ]; then\n    pr_options=(\n        --bf16)\nelif [ $PR = fp8 ]; then\n    pr_options=(\n        --bf16\n        --fp8-format hybrid)\nfi\nAC="${AC:-none}" #none #sel #full\nif [ $AC = full ]; then\n    activation_checkpoint_options=(\n            --recompute-granularity full)\nelif [ $AC = sel ]; then\n    activation_checkpoint_options=(\n        --recompute-activations)\nfi\nif [ -z ${MP_VP} ]; then\n    vp_options=()\nelse\n    vp_options=(\n        --num-layers-per-virtual-pipeline-stage ${MP_VP}\n        )\nfi\nif [ "$MODEL_SIZE" = "8x7B" ]; then\nMODEL_ARGS=(\n    --num-layers 32\n    --hidden-size 4096\n    --ffn-hidden-size 14336\n    --num-attention-heads 32\n    --group-query-attention\n    --num-query-groups 8\n    --seq-length ${SEQLEN}\n)\nelif [ "$MODEL_SIZE" = "8x22B" ]; then\nMODEL_ARGS=(\n    --num-layers 56\n    --hidden-size 6144\n    --ffn-hidden-size 16384\n    --num-attention-heads 48\n    --group-query-attention\n    --num-query-groups 8\n    --seq-length ${SEQLEN}\n)\nelse\n    echo "invalid model size"\n    exit 1\nfi\nMOE_ARGS=(--num-experts 8 --moe-router-topk 2 --moe-token-dispatcher-type alltoall)\nTRAINING_ARGS=(--micro-batch-size ${MBS} --global-batch-size ${GBS})\nMODEL_PARALLEL_ARGS=(\n    --tensor-model-parallel-size ${TP_SIZE}\n    --pipeline-model-parallel-size ${PP_SIZE}\n    --expert-model-parallel-size ${EP_SIZE}\n    --use-distributed-optimizer\n)\nif [ $SP = true ] && [ "$TP_SIZE" -gt 1 ]; then\n    MODEL_PARALLEL_ARGS+=( --sequence-parallel )\nfi\ncommand="torchrun pretrain_gpt.py ${MODEL_ARGS[@]} ${pr_options[@]} ${activation_checkpoint_options[@]} ${MOE_ARGS[@]} ${TRAINING_ARGS[@]} ${MODEL_PARALLEL_ARGS[@]}"\neval ${command}\n'


def test_the_default_branches_of_a_launcher_are_read():
    # before: rc 2 "invalid int value: '${MP_VP}'" (the unset MP_VP's else branch), then "--fp16 --bf16" (two PR
    # branches), and a model_shape mixing 8x7B's 32 layers with 8x22B's 6144 hidden and 48 heads
    imp = import_config("megatron", MIXTRAL_ROCM, devices=8)
    p = imp.parallel
    assert (p.tp, p.sp, p.ep, p.microbatch_size, p.recompute) == (8, True, 8, 4, "none")
    assert imp.precision == "bf16-mixed-fp32-grads" and imp.global_batch == 64
    assert imp.model_shape == dict(n_layers=32, d_model=4096, ffn_dim=14336, n_heads=32, n_kv_heads=8, n_experts=8,
                                   top_k=2)
    # the script's own defaults decide: PR=fp16 picks the fp16 branch, AC=sel the selective one, MODEL_SIZE=8x22B
    imp = import_config("megatron", MIXTRAL_ROCM.replace("PR=${PR:-bf16}", "PR=fp16").replace(
        'AC="${AC:-none}"', "AC=sel").replace('MODEL_SIZE=${MODEL_SIZE:-"8x7B"}', "MODEL_SIZE=8x22B"), devices=8)
    assert imp.precision.startswith("fp16") and imp.parallel.recompute == "selective"
    assert imp.model_shape["n_layers"] == 56 and imp.model_shape["d_model"] == 6144
    # SP=false: the && test fails, no --sequence-parallel, which Megatron-Core refuses beside tp 8 and ep 8
    with pytest.raises(ConfigError, match="needs --sequence-parallel") as err:
        import_config("megatron", MIXTRAL_ROCM.replace("SP=${SP:-true}", "SP=false"), devices=8)
    assert err.value.field == "sp"


@pytest.mark.parametrize(("test", "env", "held"), [
    ("[ $PR = fp16 ]", {"PR": "bf16"}, False),
    ('[ "$PR" == "bf16" ]', {"PR": "bf16"}, True),
    ("[[ $PR != bf16 ]]", {"PR": "bf16"}, False),
    ('[ "$TP" -gt 1 ]', {"TP": "8"}, True),
    ("test $TP -le 4", {"TP": "8"}, False),
    ("[ -z ${MP_VP} ]", {}, True),  # never set by the script: unset in its default run
    ('[ -n "${WANDB_API_KEY}" ]', {}, False),
    ("[ $SLURM = yes ]", {}, None),  # may come from the environment: undecided
    ("[ $SP = true ] && [ \"$TP\" -gt 1 ]", {"SP": "true", "TP": "1"}, False),
    ("[ $SP = true ] || [ $X = 1 ]", {"SP": "true"}, True),
    ("[ $SP = true ] && [ $X = 1 ]", {"SP": "true"}, None),
    ("! [ $PR = fp16 ]", {"PR": "bf16"}, True),
    ('[ "$GEMM" -eq abc ]', {"GEMM": "1"}, None),  # not integers
    ("[$ENABLE = true]", {"ENABLE": "0"}, None),  # bash's own syntax error: left undecided
])
def test_shell_conditions(test, env, held):
    assert shell_condition(test, env) is held


def test_undecided_or_unpaired_conditionals_keep_every_branch():
    # an undecided test reads every branch (the last assignment wins), as before; an unpaired fi is read as plain text
    text = "if [ $CLUSTER = aws ]; then\nTP=2\nelse\nTP=4\nfi\necho $TP"
    assert expand_variables(text).endswith("echo 4") and "TP=2" in expand_variables(text)
    assert expand_variables("A=1\nfi\necho $A") == "A=1\nfi\necho 1"
    # a Python if inside an echoed string is not a shell if (it has no then)
    text = "A=1\necho 'if x:\n    fi'\nif [ $A = 1 ]; then\nB=yes\nfi\necho $B"
    assert expand_variables(text).endswith("echo yes")


def test_a_case_on_the_scripts_own_model_size_keeps_its_branch():
    # Megatron-style launchers pick the model by `case $MODEL_SIZE in 7B) ...;; 13B) ...;; esac`: before, every branch
    # was read and the last one's sizes won (here the 70B's 80 layers for a 13B run)
    text = ("MODEL_SIZE=13B\ncase $MODEL_SIZE in\n  7B) HIDDEN=4096; LAYERS=32 ;;\n  13B|13b)\n    HIDDEN=5120\n"
            "    LAYERS=40\n    ;;\n  70B) HIDDEN=8192; LAYERS=80 ;;\n  *) echo bad; exit 1 ;;\nesac\n"
            "torchrun pretrain_gpt.py --num-layers $LAYERS --hidden-size $HIDDEN --num-attention-heads 40 "
            "--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 8 --seq-length 4096 --bf16\n")
    imp = import_config("megatron", text, devices=8)
    assert (imp.model_shape["n_layers"], imp.model_shape["d_model"]) == (40, 5120)
    assert "--num-layers 32" not in expand_variables(text) and "HIDDEN=8192" not in expand_variables(text)
    # a word from the environment: the case is read whole, as before (the last branch's sizes)
    env = text.replace("MODEL_SIZE=13B\n", "")
    assert import_config("megatron", env, devices=8).model_shape["n_layers"] == 80
    # a glob pattern: `*` catches an unlisted size (here it exits: no flags set by the case)
    assert "HIDDEN=" not in expand_variables(text.replace("MODEL_SIZE=13B", "MODEL_SIZE=30B").split("torchrun")[0])
