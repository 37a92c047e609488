"""The bulk group steps around a ptxas limit (fuzz36, sm_121a seed 48300028): on sm_120/sm_121
ptxas 13.5.37 writes `cp.async.bulk.shared::cluster.global` as a system call, which needs the
ABI that a two-result `.func` turns off ("'Indirect Functions or Extern Functions' requires
ABI"). The program is valid PTX, so the generator writes the CTA's own window there."""
from ptx2sass import oracle
from ptx2sass.fuzz.campaign import Options, case_from_program, make_program
from ptx2sass.fuzz.newarch import bulk_cluster_copy_is_a_syscall


def _program(seed, arch):
    return case_from_program(make_program(seed, Options(arch=arch))).text


def test_seed_with_a_two_result_func_and_a_bulk_copy_is_accepted_by_ptxas():
    text = _program(48300028, "sm_121a")
    assert "call (" in text and "cp.async.bulk." in text
    run = oracle.ptxas(text, "sm_121a")
    assert run.ok, run.stderr
    assert "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes" in text


def test_cluster_copy_kept_where_ptxas_compiles_it():
    """Only sm_120/sm_121 change: ptxas compiles the cluster copy beside a two-result `.func`
    on the other own targets."""
    assert bulk_cluster_copy_is_a_syscall("sm_120a") and bulk_cluster_copy_is_a_syscall("sm_121a")
    for arch in ("sm_90a", "sm_100a", "sm_103a", "sm_110a"):
        assert not bulk_cluster_copy_is_a_syscall(arch)
    text = _program(48300028, "sm_100a")
    assert "shared::cta.global.mbarrier" not in text
