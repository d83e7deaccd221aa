"""The PettingZoo exports refuse what ``env.step`` refuses, with its errors (one rule: ``check_action`` and the
value check, run on the host), follow PettingZoo's lifecycle with envhub errors, and stay usable after a refusal."""

import re

import jax
import numpy as np
import pytest

import envhub
from envhub.errors import ActionError, ClosedEnvironmentError, InvalidArgumentError

MPE = "jaxmarl/MPE_simple_spread_v3"
GOOD = {"agent_0": 0, "agent_1": 1, "agent_2": 2}

#: (bad actions, the message): each refused by the parallel export and by env.step, with the same words.
BAD_PARALLEL = [
    ({**GOOD, "zzz": 0}, r"structure does not match: unknown keys \['zzz'\] \(the keys are \['agent_0', 'agent_1', "),
    (
        {"agent_1": 1, "agent_2": 2},
        r"structure does not match: no action for \['agent_0'\] .*pass one action per entry",
    ),
    ({**GOOD, "agent_1": 1.7}, r"at action\['agent_1'\]: 1.7 has dtype float32 where integers are needed"),
    ({**GOOD, "agent_0": np.float64(2.0)}, r"at action\['agent_0'\]: 2.0 has dtype float32 where integers are needed"),
    ({**GOOD, "agent_1": True}, r"at action\['agent_1'\]: True has dtype bool where integers are needed; .*not bools"),
    ({**GOOD, "agent_0": np.bool_(False)}, r"at action\['agent_0'\]: False has dtype bool where integers are needed"),
    ({**GOOD, "agent_2": None}, r"at action\['agent_2'\]: None is not an array; the action space is Discrete\(5"),
    ({**GOOD, "agent_0": "x"}, r"at action\['agent_0'\]: 'x' is not an array"),
    ({**GOOD, "agent_1": [0, 1]}, r"at action\['agent_1'\]: shape \(2,\) where \(\) is needed"),
    ({**GOOD, "agent_0": 9}, r"9 in \['agent_0'\] is outside \[0, 5\) .*pass values inside the space"),
    ({**GOOD, "agent_0": -1}, r"-1 in \['agent_0'\] is outside \[0, 5\)"),
    (
        3,
        r"structure does not match: 3 \(int\) where a dict with the keys \['agent_0', 'agent_1', 'agent_2'\] is needed",
    ),
    (None, r"structure does not match"),
]


@pytest.fixture(scope="module")
def mpe():
    env = envhub.make(MPE, max_episode_steps=4)
    return env, envhub.interop.to_pettingzoo_parallel(env, seed=0)


@pytest.mark.requires_plugin("jaxmarl")
def test_parallel_export_refuses_what_env_step_refuses_with_its_words_and_stays_usable(mpe):
    env, par = mpe
    with pytest.raises(InvalidArgumentError, match=r"step\(\) of the export of .* before reset\(\): call reset\(\)"):
        par.step(GOOD)
    par.reset(seed=0)
    state, _ = env.init(jax.random.key(0))
    for bad, message in BAD_PARALLEL:
        with pytest.raises(ActionError, match=rf"^Invalid action for '{re.escape(MPE)}': {message}"):
            par.step(bad)
        with pytest.raises(ActionError) as eager:  # env.step says the same
            env.step(jax.random.key(1), state, bad)
        assert re.match(rf"Invalid action for '{re.escape(MPE)}': {message}", str(eager.value)), str(eager.value)
    obs, rewards, terminated, truncated, _ = par.step({a: np.int64(v) for a, v in GOOD.items()})  # still usable
    assert set(obs) == set(rewards) == set(GOOD) and not any(terminated.values()) and not any(truncated.values())
    for seed in (-1, 2**64, 2.0):  # gymnasium's rule (tests/test_interop_export_errors.py): a bare error before
        with pytest.raises(InvalidArgumentError, match=rf"^seed={seed!r} must be an int from 0 to 2\*\*63 - 1"):
            par.reset(seed=seed)
    assert set(par.reset(seed=2**63 - 1)[0]) == set(GOOD)


@pytest.mark.requires_plugin("jaxmarl")
def test_parallel_export_lifecycle_and_agent_names_are_envhub_errors(mpe):
    env, par = mpe
    par.reset(seed=1)
    for method in ("observation_space", "action_space"):
        with pytest.raises(InvalidArgumentError, match=rf"{method}\('nope'\) of .*no such agent; the agents are \["):
            getattr(par, method)("nope")
    while par.agents:
        par.step(GOOD)
    with pytest.raises(InvalidArgumentError, match=r"the episode has ended: call reset\(\) \(agents is empty\)"):
        par.step(GOOD)
    par.reset(seed=2)
    par.step(GOOD)
    par.close()  # the export's close leaves the env to its maker: the export goes on (envhub.interop.contract)
    assert not env.closed and set(par.reset(seed=2)[0]) == set(GOOD)
    env.close()  # the maker closes it: the export refuses every call
    for call in (lambda: par.step(GOOD), par.reset):
        with pytest.raises(ClosedEnvironmentError, match=r"\(\) called on environment .* after close\(\)"):
            call()


@pytest.mark.requires_plugin("pgx")
def test_aec_export_refuses_bad_actions_and_follows_pettingzoo_lifecycle():
    aec = envhub.interop.to_pettingzoo_aec(envhub.make("pgx/tic_tac_toe"), seed=1)
    for call, name in ((lambda: aec.step(0), "step"), (lambda: aec.observe("player_0"), "observe")):
        with pytest.raises(InvalidArgumentError, match=rf"{name}\(\) of the export of 'pgx/tic_tac_toe' before reset"):
            call()
    aec.reset()
    for method in ("observe", "observation_space", "action_space"):
        with pytest.raises(InvalidArgumentError, match=rf"{method}\('zz'\) of .*no such agent; the agents are \["):
            getattr(aec, method)("zz")
    for bad, message in [
        (1.7, r"1.7 has dtype float32 where integers are needed"),
        (True, r"True has dtype bool where integers are needed; .*pass integers, not bools \(e\.g\. int\(action\)"),
        (None, r"None is not an array"),
        ("x", r"'x' is not an array"),
        ([0, 1], r"shape \(2,\) where \(\) is needed"),
        (9, r"9 is outside \[0, 9\)"),
    ]:
        with pytest.raises(ActionError, match=rf"^Invalid action for 'pgx/tic_tac_toe': {message}"):
            aec.step(bad)
    for move in (0, 3, 1, 4, 2):  # refusals played nothing: the first player wins the top row
        aec.step(move)
    assert all(aec.terminations.values()) and aec.rewards[aec.possible_agents[0]] != 0
    with pytest.raises(InvalidArgumentError, match=r"'player_\d' is done, so its only valid action is None"):
        aec.step(0)
    while aec.agents:
        aec.step(None)
    with pytest.raises(InvalidArgumentError, match=r"the game is over and every agent has left: call reset\(\)"):
        aec.step(None)
    aec.reset()
    aec.step(4)
    aec.close()
    assert not aec.env.closed  # the export's close leaves the env to its maker
    aec.env.close()
    for call in (lambda: aec.step(0), lambda: aec.observe("player_0")):
        with pytest.raises(ClosedEnvironmentError, match=r"\(\) called on environment 'pgx/tic_tac_toe' after close"):
            call()
