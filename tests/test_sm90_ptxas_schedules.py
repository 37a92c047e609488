"""ptxas's sm_90 schedules that the hazard checker flagged before the hopper latency table
learnt the rule each one shows (sched/latency/hopper.json, `evidence`): fuzz programs of
seeds 9,600,000-9,600,149 (the tuning half of this round's sm_90 fuzz campaign; the held-back
half is 9,600,200-9,600,349, `python -m tools.fuzz_emu_fail`), then, once that figure was taken,
9,600,200-349 and 9,600,400-549 (held back: 9,600,600-749). ptxas's cubin of each must
decode (or run from nvdisasm's listing where the codec has a gap) and run with zero hazards:
ptxas's code runs right on hardware, so a hazard there is the table's error.
"""
from pathlib import Path

import pytest

from ptxas_schedules import hazards_in_ptxas_cubin

HERE = Path(__file__).resolve().parent / "ptxas_sm90_schedules"

# seed -> the rule its ptxas cubin needs (what the checker flagged before)
RULES = {
    "9600000": "TEX is variable-latency (FMUL -> TEX 4 flagged as a fixed reader)",
    "9600033": "TLD is variable-latency (IMAD -> TLD)",
    "9600003": "IMMA.16816 reads at issue and stores its result 15 after (single pass)",
    "9600091": "IMAD -> SUST 4",
    "9600123": "IMAD -> SURED 4",
    "9600008": "UISETP's UP guards a uniform instruction 11 after; ULOP3 -> UIMAD 4",
    "9600058": "VOTEU's UP guards a uniform instruction 5 after",
    "9600046": "UIADD3 -> UIMAD 4",
    "9600065": "UMOV -> DADD 2",
    "9600075": "UMOV -> DMUL 2",
    "9600021": "BMMA.88128 -> IADD3 13; IMAD.MOV -> IMAD.HI addend high half 2",
    "9600067": "VOTEU -> PLOP3 1",
    "9600140": "F2IP.U8 -> LOP3 4; IMAD.MOV -> IMAD.HI addend high half 2",
    "9600043": "an LDS with no scoreboard has read its address 34 cycles after issue (now 22: 9610090)",
    # second round (tuned on 9,600,200-349 after its held-back figure, and 9,600,400-549)
    "9600475": "VIADD -> SUST 4",
    "9600473": "CCTL.IVALL waits on all six scoreboards, the cp.async group's too",
    "9600504": "DADD -> FRND 6",
    "9600439": "SEL -> IMAD.HI addend high half 3",
    "9600449": "UMOV -> DFMA 2",
    "9600315": "IMMA.8816 -> IMAD 14; USEL -> UIMAD 4",
    "9600303": "UPRMT -> UIMAD 4",
    "9600221": "UMOV -> DSETP 2",
    # third round (branch hopper6: tuned on 9,610,000-149 and, after hopper5's figure on it,
    # 9,600,600-749; held back: 9,611,000-149)
    "9600604": "HFMA2 -> SUST data 6",
    "9600333": "the checker's lanes after a divergent branch: STS.128 by 2 lanes, its address "
               "register overwritten on the other path by the warp's other 30 (the cached clock "
               "split kept the whole warp's lane bits)",
    "9600711": "IMMA.8816 -> IADD3 13",
    "9610013": "IMAD.IADD -> IMAD.WIDE addend high half 2",
    "9610020": "IMAD.X -> IMAD.WIDE.X addend high half 2",
    "9610087": "HFMA2.MMA -> IMAD.WIDE addend high half 8",
    "9610090": "an LDS with a write scoreboard only has read its address 22 cycles after issue",
    "9610140": "an LDS result may overwrite a STG's data under its read scoreboard (one queue)",
    # hopper6's held-back range 9,611,000-149: the one seed it left (branch open7)
    "9611020": "USGXT -> UIMAD 4",
    # fuzz campaign 13 (seeds 25,000,000.., ptxas 13.5.37; branch open11); its SHF, VIADD -> SURED,
    # IMMA.8816 -> STG, BMMA.88128 -> STS and QSPC programs are reduced regressions in
    # tests/fuzz_regressions (s25000003, s25000817, s25000281, s25000973, s25000884)
    "25000167": "SHF -> IMAD.WIDE addend high half 3; ULEA's UP -> UIMAD.WIDE.U32.X 4",
    "25000947": "UPOPC -> UIMAD 4",
    "25000394": "HMNMX2 -> HSETP2 4",
    "25000412": "VOTEU's UP -> USEL 1",
    "25000604": "FADD -> SUST data 4",
    "25000102": "DFMA overwrites an HMMA.16816 source 6 cycles after issue (late_fixed_reads_write_early)",
    "25001131": "HFMA2.BF16_V2 -> HADD2 4",
    "25000859": "IMMA.SP.16832 -> F2I 14 (a decoupled reader, 2 before the fixed 16)",
    # campaign 13's one program open11 left (branch arch13)
    "25001043": "IMAD.HI with a register factor: its carry-out read by IADD3.X 5 cycles after (9 kept "
                "for an immediate factor)",
    # fuzz campaign 19 (seeds 30,000,000.., held out; lead, 2026-11-28)
    "30000392": "VIMNMX -> IMAD.HI addend high half 3",
    "30000539": "PLOP3 -> R2UR.OR's predicate source 2",
    "30000622": "IMAD.HI with an immediate factor: its carry-out read by IADD3.X 5 cycles after",
    "30000706": "VOTEU's UP -> UISETP's predicate source 1",
    "30000750": "QSPC is in the mio queue: a wait on it covers an earlier ATOMS's result",
    "30000803": "IDP -> SUST 4",
    "30000946": "FADD -> SURED 4",
    "30000947": "FMUL -> SURED 4",
    "30001073": "DMUL overwrites an HMMA.16816 source 6 cycles after issue",
    "30001793": "DADD overwrites an HMMA.16816 source 6 cycles after issue",
    "30002069": "DADD -> F2F 6",
    "30002182": "CS2R -> MUFU 4",
    "30002222": "LOP3 -> IMAD.WIDE addend high half 3",
    "30002319": "PRMT -> IMAD.HI addend high half 3",
    "30002808": "SUST reads an HMMA.SP result 2 before its fixed latency (a decoupled reader)",
    "30003605": "DMUL -> F2F 6",
    "30001270": "VOTEU's UP -> UPLOP3 1",
    "30001415": "IMAD -> IMAD.HI addend high half 2",
    "30001480": "FFMA -> SUST 4",
    # fuzz campaign 28 (seeds 40,000,000.., branch hopper30; its other rules are reduced programs in
    # tests/fuzz_regressions, all in tests/test_sm90_campaign28_rules.py)
    "40002046": "a UISETP predicate guards S2UR 11 after (uniform_guard_readers)",
    "40002967": "SYNCS reads its sources before a later SYNCS writes them (store_queue SYNCS)",
}


@pytest.mark.parametrize("seed", sorted(RULES))
def test_ptxas_sm90_schedule_has_no_hazard(seed):
    hazards = hazards_in_ptxas_cubin(HERE / f"s{seed}.ptx", "sm_90")
    assert not hazards, f"{RULES[seed]}: {hazards[0].message}"
