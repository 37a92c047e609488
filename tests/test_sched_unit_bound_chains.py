"""Independent chains bound by one unit are taken one after the other (sched.list_schedule's
`issue_order` with the MUFU unit as a resource): in Triton's flash_attn_causal (tuning part)
each loop iteration's two softmax rows take 4 MUFU.EX2 each (8 cycles a warp instruction on
the unit), then a sum reduced by shuffles. ptxas 13.5 (nvdisasm of its cubin) shuffles the
first row's sum while the second row's MUFUs issue; equal heights made ours interleave the
rows' MUFUs and shuffle only after the last one. Outputs and hazards: tests/test_triton_corpus.py."""
from ptx2sass import codegen, oracle
from test_codegen_quality import _instructions
from tools.corpora import corpus_dirs


def _sum_shuffle_before_last_exp(sass: str) -> bool:
    """Some SHFL after the first MUFU.EX2 comes before the last MUFU.EX2 (of the loop, the
    only place with MUFU.EX2)."""
    ops = [i.split()[1] if i.startswith("@") else i.split()[0] for i in _instructions(sass)]
    exps = [k for k, op in enumerate(ops) if op == "MUFU.EX2"]
    return any(op.startswith("SHFL") for op in ops[exps[0]:exps[-1]])


def test_flash_attention_row_sum_shuffles_overlap_the_other_rows_exps():
    ptx = (corpus_dirs()["triton"] / "flash_attn_causal.ptx").read_text()
    theirs = oracle.nvdisasm(oracle.ptxas(ptx, "sm_89").output)
    assert _sum_shuffle_before_last_exp(theirs)                  # the premise, from ptxas's cubin
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "flash_attn_causal.ptx"), "sm_89",
                                      filename="flash_attn_causal.ptx")
    assert _sum_shuffle_before_last_exp(oracle.nvdisasm(ours))
