"""The conformance kit passes a correct environment and catches each kind of violation."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envhub import spaces, testing
from envhub.testing.toy_envs import Corridor

OPTIONS = testing.Options(time_limit_kwarg="max_steps", time_limit=5)


def make(bug=None, num_envs=None):
    from envhub.wrappers import VmapEnvironment

    def factory(**kwargs):
        env = Corridor(bug=bug, **kwargs)
        env.id = f"toy/Corridor-v0[{bug}]"
        return env if num_envs is None else VmapEnvironment(env, num_envs)

    return factory


def test_correct_env_passes_every_check():
    results = testing.run_checks(make(), OPTIONS)
    assert [r.name for r in results] == list(testing.CHECKS)
    assert all(ok(r) for r in results), testing.format_report(results)


def ok(result):
    """Passed; or export, skipped (having compared its call) only because flatbuffers is not installed; or
    params, skipped because Corridor has none (tests/test_params.py runs the check on an env that has)."""
    serialization_untested = "serialization was not tested" in result.message and "flatbuffers" in result.message
    no_params = result.name == "params" and result.skipped and "has no parameters" in result.message
    return result.passed or no_params or (result.name == "export" and result.skipped and serialization_untested)


def test_batched_env_passes_and_skips_vmap_with_the_reason():
    results = testing.run_checks(make(num_envs=3), OPTIONS)
    vmap = next(r for r in results if r.name == "vmap")
    assert vmap.skipped and "batched (num_envs=3)" in vmap.message
    assert all(ok(r) for r in results if r is not vmap), testing.format_report(results)
    report = testing.format_report(results)
    skipped = sum(r.skipped for r in results)  # vmap, and export without flatbuffers
    assert "SKIP  vmap" in report and f"{len(testing.CHECKS) - skipped} passed, 0 failed, {skipped} skipped" in report


def test_vmap_check_fails_when_a_mapped_result_belongs_to_another_key():
    from envhub.testing.probe import Probe

    probe = Probe(make(), OPTIONS)
    mapped = probe.vmapped_first_steps
    probe.vmapped_first_steps = lambda keys: mapped(keys[::-1])  # results routed to the wrong keys
    result = testing.run_check("vmap", make(), OPTIONS, probe=probe)
    assert result.failed and "vmap result 0 differs from running key 0 alone" in result.message, result


def test_truncation_is_skipped_without_a_time_limit_kwarg():
    result = testing.run_check("truncation", make(), testing.Options())
    assert result.skipped and not result.passed and "no time-limit kwarg" in result.message


def test_the_base_class_reports_a_check_that_does_not_apply_as_a_pytest_skip():
    class NoLimit(testing.ConformanceTests):
        options = testing.Options()

        def make_env(self, **kwargs):
            return Corridor(**kwargs)

    try:
        with pytest.raises(pytest.skip.Exception, match="truncation: the env has no time-limit kwarg"):
            NoLimit().test_truncation()
        NoLimit().test_init()  # the other checks still run, on the class's one probe
    finally:
        NoLimit.teardown_class()


def test_option_overrides_reach_the_checks():
    class Overridden(testing.ConformanceTests):
        options = testing.Options()  # no time-limit kwarg: truncation would be skipped
        option_overrides = {"time_limit_kwarg": "max_steps", "time_limit": 4}

        def make_env(self, **kwargs):
            return Corridor(bug="no_truncation", **kwargs)

    try:
        assert Overridden()._options() == testing.Options(time_limit_kwarg="max_steps", time_limit=4)
        with pytest.raises(AssertionError, match="truncation: an episode ran past the time limit 4"):
            Overridden().test_truncation()
    finally:
        Overridden.teardown_class()


def test_option_overrides_apply_on_top_of_the_registered_options():
    pytest.importorskip("envhub_gymnax", reason="needs an installed plugin: the base class reads envhub's registry")
    import envhub

    class Registered(testing.ConformanceTests):
        env_id = "gymnax/CartPole-v1"
        option_overrides = {"time_limit": 3}

    registered = testing.options_for(envhub.default_registry().spec("gymnax/CartPole-v1"))
    assert registered.time_limit != 3
    assert Registered()._options() == dataclasses.replace(registered, time_limit=3)


def test_option_overrides_and_a_missing_env_id_are_clear_errors():
    from envhub.errors import InvalidArgumentError

    class Typo(testing.ConformanceTests):
        options = OPTIONS
        option_overrides = {"time_limt": 3}

    with pytest.raises(InvalidArgumentError, match=r"Typo.option_overrides has unknown field\(s\) \['time_limt'\]"):
        Typo()._options()

    class Nameless(testing.ConformanceTests):
        def make_env(self, **kwargs):
            return Corridor(**kwargs)

    with pytest.raises(InvalidArgumentError, match="Nameless sets neither env_id nor options; set env_id"):
        Nameless().test_init()


@pytest.mark.parametrize("prefix", ["gymnax", "gymnasium", "envpool", "brax"])
def test_a_plugins_check_options_are_one_table_that_every_registered_env_reads(prefix):
    pytest.importorskip(prefix, reason=f"the {prefix} plugin registers its envs only with {prefix} installed")
    module = pytest.importorskip(f"envhub_{prefix}", reason=f"the envhub-{prefix} plugin is not installed")
    import envhub

    table = module.CHECK_OPTIONS
    fields = {f.name for f in dataclasses.fields(testing.Options)}
    assert "*" in table and all(set(options) <= fields for options in table.values())
    specs = {spec.name: spec for spec in envhub.default_registry().list_envs(prefix)}
    renamed = getattr(module, "RENAMED", {})  # old ids of the backend's other versions -> the table's names
    assert set(table) - {"*"} <= set(specs) | set(renamed.values())  # no entry for an env it never registers
    for name, spec in specs.items():
        if spec.unavailable is not None:
            continue  # never made, so never checked (gymnax registers its offline-only env without options)
        assert spec.check_options == envhub.check_options_for(table, renamed.get(name, name))
        assert testing.options_for(spec).time_limit_kwarg == table["*"]["time_limit_kwarg"]


@pytest.mark.parametrize(
    "bug,check,message,options",
    [
        ("next_step_reset", "truncation", "dummy step", OPTIONS),
        ("final_obs", "autoreset", "no auto-reset happened", OPTIONS),
        ("both_flags", "autoreset", "both set", testing.Options(num_steps=300)),  # long episodes: some terminate
        ("weak_info", "structure", "weak_type", OPTIONS),
        ("float_reward", "structure", "reward", OPTIONS),
        ("ignores_key", "determinism", "identical trajectories", OPTIONS),
        ("no_truncation", "truncation", "ran past the time limit 5", OPTIONS),
        ("obs_dtype", "structure", "at init, obs is float16 of shape (2,), but its space Box(", OPTIONS),
        ("reset_state", "structure", "init vs reset: pytree structures differ", OPTIONS),
    ],
)
def test_each_violation_is_caught(bug, check, message, options):
    result = testing.run_check(check, make(bug), options)
    assert not result.passed
    assert message in result.message


def test_only_the_strict_observation_check_catches_a_final_obs_of_the_wrong_dtype():
    # Its values equal obs and lie in the Box, and contains() only asks for a float: every other check passes.
    results = {r.name: r for r in testing.run_checks(make("final_obs_dtype"), OPTIONS)}
    assert [name for name, r in results.items() if not ok(r)] == ["structure"]
    assert results["structure"].message == (
        "at init, final_obs is float16 of shape (2,), "
        "but its space Box(low=0.0, high=6.0, shape=(2,), dtype=float32) holds float32 of shape (2,)"
    )


def test_strict_observation_check_names_the_leaf_and_compares_structure_shape_and_dtype_exactly():
    from envhub import spaces
    from envhub.testing.compare import space_mismatch

    space = spaces.Tree({"pos": spaces.Box(0.0, 1.0, (3,)), "goal": (spaces.Discrete(4), spaces.Discrete(4))})
    f32, i32 = jax.ShapeDtypeStruct((3,), jnp.float32), jax.ShapeDtypeStruct((), jnp.int32)
    assert space_mismatch(space, {"pos": f32, "goal": (i32, i32)}, "obs") is None
    wide = space_mismatch(space, {"pos": jax.ShapeDtypeStruct((1, 3), jnp.float32), "goal": (i32, i32)}, "obs")
    assert wide is not None and wide.startswith("obs['pos'] is float32 of shape (1, 3), but its space Box(")
    assert wide.endswith("holds float32 of shape (3,)")
    narrow = space_mismatch(space, {"pos": f32, "goal": (i32, jax.ShapeDtypeStruct((), jnp.uint8))}, "final_obs")
    assert narrow is not None and narrow.startswith(
        "final_obs['goal'][1] is uint8 of shape (), but its space Discrete(4"
    )
    as_list = space_mismatch(space, {"pos": f32, "goal": [i32, i32]}, "obs")
    assert as_list is not None and as_list.startswith("obs has pytree structure PyTreeDef({'goal': [*, *]")
    assert "but the observation space has PyTreeDef({'goal': (*, *)" in as_list
    assert "of shape (3,)" in (space_mismatch(spaces.Box(0.0, 1.0, (3,)), jnp.zeros(2), "obs") or "")


def test_check_env_raises_with_a_report():
    with pytest.raises(AssertionError, match=r"(?s)FAIL  truncation.*dummy step"):
        testing.check_env(make("next_step_reset"), OPTIONS)


def test_keys_matter_false_accepts_key_free_envs():
    assert testing.run_check("determinism", make("ignores_key"), testing.Options(keys_matter=False)).passed


def test_autoreset_needs_an_episode_end():
    result = testing.run_check("autoreset", make(), testing.Options(num_steps=3))
    assert not result.passed and "no episode ended" in result.message


def test_options_for_rejects_unknown_fields(registry):
    spec = registry.spec("toy/Corridor-v0")
    assert testing.options_for(spec).time_limit_kwarg == "max_steps"
    with pytest.raises(ValueError, match=r"check_options of 'toy/Corridor-v0' has unknown field\(s\) \['nope'\]"):
        testing.options_for(dataclasses.replace(spec, check_options={"nope": 1}))


class TestCorridorThroughTheBaseClass(testing.ConformanceTests):
    """The few lines a plugin writes: the kit's pytest base class applied to one env."""

    options = OPTIONS

    def make_env(self, **kwargs):
        return Corridor(**kwargs)


def test_mask_problem_names_the_mask_and_what_is_wrong():
    """The kit's auto-reset check holds legal-action masks (docs/multi-agent.md) to: bool, one per action, some legal."""
    from types import SimpleNamespace

    from envhub.testing.compare import mask_problem

    turn_based = SimpleNamespace(single_action_space=spaces.Discrete(3))
    ok = {"observation": np.zeros((4, 2, 5)), "legal_action_mask": np.array([[[True, False, False]] * 2] * 4)}
    assert mask_problem(turn_based, ok) is None
    assert (
        mask_problem(turn_based, {"legal_action_mask": np.ones((4, 3), np.int8)})
        == "obs['legal_action_mask'] is int8, not bool"
    )
    assert "has 2 entries for the 3 actions" in mask_problem(turn_based, {"legal_action_mask": np.ones((4, 2), bool)})
    stuck = np.array([[True, False, False], [False, False, False]])
    assert (
        mask_problem(turn_based, {"legal_action_mask": stuck})
        == "obs['legal_action_mask'][1] allows no action at all: bool[3] [False, False, False]"
    )
    steps = np.ones((4, 2, 3), bool)
    steps[2, 1] = False  # the third step of env 1
    assert (
        mask_problem(turn_based, {"legal_action_mask": steps}, ("step", "env"))
        == "obs['legal_action_mask'] at step 3, env 1 allows no action at all: bool[3] [False, False, False]"
    )
    simultaneous = SimpleNamespace(single_action_space=spaces.Tree({"a": spaces.Discrete(2), "b": spaces.Discrete(3)}))
    per_agent = {"a": {"legal_action_mask": np.ones((5, 2), bool)}, "b": {"legal_action_mask": np.ones((5, 2), bool)}}
    assert (
        mask_problem(simultaneous, per_agent)
        == "obs['b']['legal_action_mask'] has 2 entries for the 3 actions of Discrete(3, dtype=int32)"
    )
    assert mask_problem(turn_based, np.zeros((4, 3))) is None  # no mask: nothing to check
