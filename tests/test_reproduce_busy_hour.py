"""The busy-hour study (issue 37, hfcsim.papers.busy_hour): its scenarios are valid at every point, a run's row
carries the household's experience, and the physics its claims rest on shows even in a short run."""

import pytest

from hfcsim.papers import papers
from hfcsim.papers import busy_hour as bh
from hfcsim.scenario import resolve


def test_the_study_is_registered_under_its_key():
    paper = papers()["busy-hour"]()
    assert paper.key == "busy-hour" and paper.stack == "linux"
    assert [c.id for c in paper.claims] == ["BH-bloat", "BH-lld-game", "BH-call", "BH-pages"]


@pytest.mark.parametrize("aqm", bh.AQMS)
@pytest.mark.parametrize("modems", bh.MODEMS)
def test_every_point_is_a_valid_scenario_with_the_household_on_modem_0(aqm, modems):
    sc = bh._mix_nqb(bh.scenario(aqm, modems, bh.QUICK_S))
    assert sum(g["count"] for g in sc["modems"]) == modems
    assert [w["modem"] for w in sc["web"]][:1] == [0] and sc["video"][0]["modem"] == 0
    assert sc["games"][0]["modem"] == 0 and sc["calls"][0]["modem"] == 0
    # Under LLD every game and call is NQB, the neighbours' too; elsewhere none.
    assert {g["nqb"] for g in sc["games"] + sc["calls"]} == {aqm == "lld"}


def test_a_short_run_shows_what_the_claims_rest_on():
    bloat, _ = bh.run_row("droptail", 1, 4.0, 1)
    lld, pages = bh.run_row("lld", 1, 4.0, 1)
    for row in (bloat, lld):
        assert row["pages_loaded"] >= 1 and row["video_startup_s"] > 0 and 1.0 <= row["call_mos"] <= 4.5
    # The household's upload fills the modem's drop-tail buffer: the game's upstream p99 is its ~100 ms;
    # under LLD the NQB game skips it.
    assert bloat["game_up_p99_ms"] > 50 > 10 > lld["game_up_p99_ms"]
    assert all(p["load_s"] > 0 for p in pages)
