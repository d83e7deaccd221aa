"""``register_gymnasium`` registers only available single-agent ids, each under a gymnasium-valid name, and an id
gymnasium refuses never breaks the registry for the others."""

import pytest

from envhub.registry import api
from envhub.registry.specs import EnvSpec

gymnasium = pytest.importorskip("gymnasium")
from envhub import interop  # noqa: E402  (needs gymnasium to register)
from envhub.interop.registration import gymnasium_id  # noqa: E402


def _spec(prefix, name, unavailable=None):
    return EnvSpec(prefix, name, None, unavailable=unavailable)


LISTED = {
    "fake": [
        _spec("fake", "Good-v1"),
        _spec("fake", "humanoid_9|8"),  # jaxmarl's MaBrax spelling: '|' is not in a gymnasium name
        _spec("fake", "a/b c-v0"),
        _spec("fake", "humanoid_9 8"),  # the same gymnasium name as humanoid_9|8: the first keeps it
        _spec("fake", "Clash"),
        _spec("fake", "Clash-v1"),  # gymnasium refuses a versioned id beside an unversioned one
        _spec("fake", "Gone-v0", unavailable="its library is missing"),
    ],
    "jaxmarl": [_spec("jaxmarl", "MPE_simple_spread_v3"), _spec("jaxmarl", "humanoid_9|8")],
    "pgx": [_spec("pgx", "2048"), _spec("pgx", "minatar-breakout"), _spec("pgx", "chess")],
    "gymnasium": [_spec("gymnasium", "CartPole-v1"), _spec("gymnasium", "envhub/gymnax-CartPole-v1")],
}


def test_only_single_agent_ids_under_valid_names_and_refusals_break_nothing(monkeypatch):
    monkeypatch.setattr(api, "list_envs", lambda prefix: LISTED[prefix])
    with pytest.warns(UserWarning) as caught:
        ids = interop.register_gymnasium(list(LISTED))
    try:
        assert ids == [
            "envhub/fake-Good-v1",
            "envhub/fake-humanoid_9_8",
            "envhub/fake-a-b_c-v0",
            "envhub/fake-Clash",
            "envhub/pgx-2048",
            "envhub/pgx-minatar-breakout",
            "envhub/gymnasium-CartPole-v1",
        ]
        messages = [str(w.message) for w in caught]
        assert any(
            "'fake/humanoid_9 8' skipped: 'envhub/fake-humanoid_9_8' is 'fake/humanoid_9|8'" in m for m in messages
        )
        assert any("'fake/Clash-v1' skipped: gymnasium refused 'envhub/fake-Clash-v1'" in m for m in messages)
        for gid in ids:  # every name parses, and the registry still answers for the others
            assert gymnasium.spec(gid).kwargs["envhub_id"].startswith(gid.split("/")[1].split("-")[0])
        assert gymnasium.spec("envhub/fake-humanoid_9_8").kwargs == {"envhub_id": "fake/humanoid_9|8"}
        assert gymnasium.spec("CartPole-v1").id == "CartPole-v1"
        assert "envhub/fake-Clash-v1" not in gymnasium.registry
        assert gymnasium_id("gymnax/CartPole-v1") == "envhub/gymnax-CartPole-v1"
    finally:
        for gid in ids:
            gymnasium.registry.pop(gid, None)


@pytest.mark.requires_plugin("gymnax", "jaxmarl")
def test_registering_jaxmarl_leaves_gymnasium_make_working():
    ids = interop.register_gymnasium(["jaxmarl", "gymnax"])
    try:
        assert not [gid for gid in ids if gid.startswith("envhub/jaxmarl-")] and "envhub/gymnax-CartPole-v1" in ids
        env = gymnasium.make("envhub/gymnax-CartPole-v1")
        assert env.reset(seed=0)[0].shape == (4,)
    finally:
        for gid in ids:
            gymnasium.registry.pop(gid, None)
