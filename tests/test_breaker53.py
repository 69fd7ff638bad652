"""Breaker pass 53: launch scripts read as bash runs them (only the launcher's words, arrays, local / declare / multiple
assignments, ${NAME:=default}, arithmetic, #SBATCH --nodes, a # inside a word), and the other findings of the pass.
Each test fails on the behaviour before the fix (noted in its comment)."""

from __future__ import annotations

import pytest

from shardplan.errors import ConfigError
from shardplan.export import import_config

M = ("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
     "--micro-batch-size 1 --global-batch-size 64 --bf16")
RUN = "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py"


def _layout(script: str, devices: int | None = None) -> tuple[int, int, int, int]:
    imp = import_config("megatron", script, devices=devices)
    return imp.devices, imp.parallel.tp, imp.parallel.pp, imp.parallel.ep


def test_only_the_launcher_command_s_flags_are_read():
    # an array the launcher never uses set tp 8 (argparse kept the last --tensor-model-parallel-size in the file): 2
    unused = (f"MODEL_ARGS=({M})\nPAR_ARGS=(--tensor-model-parallel-size 2)\n"
              f"DEBUG_PAR_ARGS=(--tensor-model-parallel-size 8)\n{RUN} ${{MODEL_ARGS[@]}} ${{PAR_ARGS[@]}}\n")
    assert _layout(unused) == (16, 2, 1, 1)
    # an unused MoE array made a dense run ep 8 with 8 experts
    moe = (f"MODEL_ARGS=({M})\nMOE_ARGS=(--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8)\n"
           f'{RUN} "${{MODEL_ARGS[@]}}" --tensor-model-parallel-size 2\n')
    imp = import_config("megatron", moe)
    assert imp.parallel.ep == 1 and "n_experts" not in (imp.model_shape or {})
    # a heredoc's usage text gave pp 4; a post-processing command after the run gave tp 1
    heredoc = (f"cat <<USAGE\nRun with --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 for the 70B\n"
               f"USAGE\n{RUN} {M} --tensor-model-parallel-size 2\n")
    assert _layout(heredoc) == (16, 2, 1, 1)
    post = (f"TP=2\n{RUN} {M} --tensor-model-parallel-size $TP 2>&1 | tee log.txt\n"
            "python tools/postprocess.py --tensor-model-parallel-size 1 --input log.txt\n")
    assert _layout(post) == (16, 2, 1, 1)


def test_shell_assignment_forms_bash_knows():
    # `local` inside a function was ignored (tp 2 where bash runs 8)
    assert _layout(f"TP=2\nrun() {{\n  local TP=8\n  {RUN} {M} --tensor-model-parallel-size $TP\n}}\nrun\n")[1] == 8
    # these were refused as "a shell variable the script does not set itself"
    for script in (f": ${{TP:=4}}\n{RUN} {M} --tensor-model-parallel-size $TP",
                   f"TP=4\n{RUN} {M} --tensor-model-parallel-size ${{TP:=2}}",
                   f"TP=4 PP=2\n{RUN} {M} --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP",
                   f"export TP=4 PP=2\n{RUN} {M} --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP",
                   f"declare -i TP=4\nreadonly PP=2\n{RUN} {M} --tensor-model-parallel-size $TP "
                   "--pipeline-model-parallel-size $PP",
                   # CRLF line endings (bash on such a file still runs these values)
                   f"TP=4\r\nPP=2\r\n{RUN} {M} --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP\r\n"):
        devices, tp, pp, _ = _layout(script)
        assert tp == 4 and pp in (1, 2), script
    # `unset` makes a default apply again: ${TP:-4} after unset TP is 4 (was the old 2)
    assert _layout(f"TP=2\nunset TP\n{RUN} {M} --tensor-model-parallel-size ${{TP:-4}}")[1] == 4


def test_shell_arithmetic_on_known_values():
    # $((32*2)) in a flag was refused ("invalid int value: '$'"); GBS=$((MBS*64)) as an unset variable
    imp = import_config("megatron", f"{RUN} {M.replace('--global-batch-size 64', '--global-batch-size $((32*2))')}")
    assert imp.global_batch == 64
    imp = import_config("megatron", f"MBS=1\nGBS=$((MBS*64))\n{RUN} {M.replace('64 --bf16', '$GBS --bf16')}")
    assert imp.global_batch == 64
    from shardplan.export.base import arithmetic
    # bash: / truncates toward zero, % takes the dividend's sign; an unset name or another operator: unknown
    assert (arithmetic("7/2", {}), arithmetic("-7/2", {}), arithmetic("-7 % 3", {})) == ("3", "-3", "-1")
    assert arithmetic("A*2", {}) is None and arithmetic("2**3", {}) is None and arithmetic("1/0", {}) is None


def test_a_value_the_shell_computes_is_named_as_such():
    # a loop variable / read: refused (the value is unknown), but not as "a variable the script does not set"
    for script in (f"TP=2\nfor TP in 4 8; do echo $TP; done\n{RUN} {M} --tensor-model-parallel-size $TP",
                   f'read TP <<< "4"\n{RUN} {M} --tensor-model-parallel-size ${{TP:-2}}'):
        with pytest.raises(ConfigError, match="TP holds a value the script computes with the shell") as e:
            import_config("megatron", script)
        assert "does not set itself" not in str(e.value)


def test_sbatch_nodes_give_the_job_s_world_size():
    # NNODES=${SLURM_NNODES:-1} under #SBATCH --nodes=4 was read as 1 node (8 devices where the job has 32)
    script = (f"#!/bin/bash\n#SBATCH --nodes=4\nNNODES=${{SLURM_NNODES:-1}}\n"
              f"torchrun --nnodes $NNODES --nproc-per-node 8 pretrain_gpt.py {M} --tensor-model-parallel-size 2\n")
    assert _layout(script) == (32, 2, 1, 1)
    # #SBATCH --export=ALL,TP=4 sets TP in the job's environment
    script = f"#SBATCH --export=ALL,TP=4\nTP=${{TP:-2}}\n{RUN} {M} --tensor-model-parallel-size $TP\n"
    assert _layout(script)[1] == 4


def test_a_hash_inside_a_word_is_no_comment():
    # --log-dir /tmp/run#1 dropped every flag after it (pp 1 where bash runs pp 2)
    script = f"{RUN} {M} --tensor-model-parallel-size 2 --log-dir /tmp/run#1 --pipeline-model-parallel-size 2 # pp 2"
    assert _layout(script) == (16, 2, 2, 1)


#: the released config.json keys the shapes depend on (deepseek-ai/DeepSeek-V3, meta-llama/Meta-Llama-3-8B)
DEEPSEEK_V3 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
               "intermediate_size": 18432, "num_hidden_layers": 61, "num_attention_heads": 128,
               "num_key_value_heads": 128, "vocab_size": 129280, "moe_intermediate_size": 2048, "n_routed_experts": 256,
               "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "n_group": 8,
               "topk_group": 4, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
               "qk_rope_head_dim": 64, "v_head_dim": 128}
LLAMA_3_8B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "vocab_size": 128256}


def test_deepseek_routing_keys_that_transformers_reads_otherwise_are_refused(tmp_path):
    # a DeepSeek-V3 config without n_routed_experts (or null) was priced as a 37.4B dense model (671B with it)
    import json

    from shardplan.loaders import load_model
    cfg = dict(DEEPSEEK_V3)
    for edit, match in (({"n_routed_experts": None}, "n_routed_experts is null"), ({}, "n_routed_experts is missing"),
                        ({"n_group": 7}, "n_group=7 does not divide n_routed_experts=256"),
                        ({"topk_group": 9}, "topk_group=9 is not between 1 and n_group=8")):
        doc = {k: v for k, v in cfg.items() if not (k == "n_routed_experts" and not edit)} | edit
        path = tmp_path / "ds.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(ConfigError, match=match):
            load_model(str(path))


@pytest.mark.parametrize("scaling", ["linear", {"type": "bogus", "factor": -1}, {"factor": 8.0}])
def test_rope_scaling_transformers_cannot_read_is_refused(tmp_path, scaling):
    # a string or a negative factor was accepted (no cost depends on it, but transformers fails on both)
    import json

    from shardplan.loaders import load_model
    path = tmp_path / "llama.json"
    path.write_text(json.dumps(dict(LLAMA_3_8B, rope_scaling=scaling)))
    with pytest.raises(ConfigError, match="rope_scaling"):
        load_model(str(path))
    path.write_text(json.dumps(dict(LLAMA_3_8B, rope_scaling={"rope_type": "llama3", "factor": 8.0})))
    assert load_model(str(path)).n_layers == 32


EASYDEL = ('import easydel as ed\nmodel = ed.AutoEasyDeLModelForCausalLM.from_pretrained("meta-llama/Meta-Llama-3-8B",'
           ' sharding_axis_dims=(1, -1, 1, 1, 1), config_kwargs=ed.EasyDeLBaseConfigDict({kw}))\n'
           'arguments = ed.TrainingArguments(total_batch_size=16, gradient_accumulation_steps=4, '
           'max_sequence_length=8192)\n')


def test_easydel_attention_and_checkpointing_members():
    # VANILLA (the unfused core) was priced as flash; NONE was refused ('none' is not a policy: its value is "")
    imp = import_config("easydel", EASYDEL.format(kw="attn_mechanism=ed.AttentionMechanisms.VANILLA"), devices=16)
    assert imp.attention == "naive" and imp.to_plan()["training"]["attention"] == "naive"
    assert import_config("easydel", EASYDEL.format(kw="attn_mechanism='splash'"), devices=16).attention is None
    imp = import_config("easydel", EASYDEL.format(kw="gradient_checkpointing=ed.EasyDeLGradientCheckPointers.NONE"),
                        devices=16)
    assert imp.parallel.recompute == "none"
    with pytest.raises(ConfigError, match="attn_mechanism='bogus_attention'; legal: 'vanilla'"):
        import_config("easydel", EASYDEL.format(kw="attn_mechanism='bogus_attention'"), devices=16)


@pytest.mark.parametrize("framework", ["maxtext", "easydel"])
def test_naive_attention_survives_the_round_trip(framework):
    # MaxText's attention: dot_product was ignored on import; both exporters refused attention='naive'
    from shardplan.inputs import build_inputs
    from shardplan.cost.step import estimate
    from shardplan.export import export_text
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="tpu-v5p", devices=16, seq_len=4096, global_batch=64,
                                 global_batch_tokens=None, attention="naive",
                                 precision="bf16-mixed" if framework == "easydel" else None)
    text = export_text(framework, estimate(m, hw, tr, pc, 16))
    assert import_config(framework, text, devices=16).attention == "naive"
    imp = import_config("maxtext", "ici_fsdp_parallelism: -1\nper_device_batch_size: 1\nattention: flash\n", devices=8)
    assert imp.attention is None
    with pytest.raises(ConfigError, match="MaxText attention='splashy'"):
        import_config("maxtext", "ici_fsdp_parallelism: -1\nattention: splashy\n", devices=8)


def test_megatron_import_checks_what_megatron_checks_at_start_up():
    # etp on a dense model: written to the plan, which estimate then refused; now dropped with a note
    imp = import_config("megatron", f"{RUN} {M} --tensor-model-parallel-size 2 --sequence-parallel "
                                    "--expert-tensor-parallel-size 4")
    assert imp.parallel.etp is None and any("without --num-experts" in n for n in imp.notes)
    # ep not dividing the experts, a2a cp over 16 ranks with 8 KV heads, empty middle stages: refused at import
    for flags, match in (("--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 16",
                          "--expert-model-parallel-size 16 does not divide --num-experts 8"),
                         ("--group-query-attention --num-query-groups 8 --context-parallel-size 16 --cp-comm-type a2a",
                          "the 8 key/value heads do not divide over 16 ranks"),
                         ("--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 16 "
                          "--decoder-last-pipeline-num-layers 16", "leaves 0 for the other 2 stages"),
                         ("--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 20 "
                          "--decoder-last-pipeline-num-layers 20", "add up to 40, more than --num-layers 32")):
        with pytest.raises(ConfigError, match=match):
            import_config("megatron", f"{RUN} {M} {flags}")


def test_ds_config_batch_mismatch_names_batches_the_devices_reach():
    # 63 or 66 were suggested for 16 devices (dp divides 16: 3 x dp is 3, 6, 12, 24 or 48)
    import json
    ds = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 3}
    with pytest.raises(ConfigError, match="3, 6, 12, 24, 48"):
        import_config("deepspeed", json.dumps(ds), devices=16)
