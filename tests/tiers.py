"""The quick tier, ``pytest -n 2 -m quick``: the inner loop while editing, not CI (CI runs everything).

It selects every core test and docs block but the slow ones (``SLOW``: side venvs, the release build,
subprocess jobs, whole-kit runs on wrappers) and, for every in-repo backend, the one conformance-kit
class that stands for it (``KIT``): each backend is exercised, through every kit check, once. Timings:
CONTRIBUTING.md ("The quick tier"). A test that becomes slow goes into ``SLOW``; a test for a backend
that has no class in ``KIT`` is not in the tier, so a new plugin adds its class here.
"""

from __future__ import annotations

import pytest

#: Per plugin folder: the conformance-kit class run in the quick tier.
KIT = {
    "envhub-gymnax": "TestBatchedCartPole",
    "envhub-gymnasium": "TestCartPoleBatched",
    "envhub-envpool": "TestCartPoleBatched",
    "envhub-brax": "TestInvertedPendulum",
    "envhub-jumanji": "TestBatchedSnake",
    "envhub-craftax": "TestKitClassicSymbolic",
    "envhub-xminigrid": "TestKit_MiniGrid_DoorKey_5x5",
    "envhub-playground": "TestKitPendulumSwingup",
    "envhub-pgx": "TestKit_tic_tac_toe",
    "envhub-jaxmarl": "TestKit_MPE_simple_spread_v3",
    "envhub-factoriax": "TestKit_MinerBootstrap_v1",
    "envhub-octax": "TestKit_brix",
    "envhub-jaxatari": "TestKit_pong",
    "envhub-ale": "TestPongBatched",
}
#: Core tests left out (node ids without parameters): more than 5 s each on this project's 2-core CI.
SLOW = {
    "tests/test_action_values.py::test_every_backend_eager_and_jit",
    "tests/test_docs.py::test_site_builds_strict_with_every_page",
    "tests/test_ippo_example.py::test_a_short_run_writes_metrics_and_curve",
    "tests/test_selfplay_example.py::test_a_short_run_writes_metrics_and_curve",
    "tests/test_interop_vector.py::test_every_gymnasium_vector_wrapper_steps",
    "tests/test_pure_programs.py::test_a_second_process_loads_the_programs_from_the_cache",
    "tests/test_pure_programs.py::test_no_host_callback_in_any_program",
    "tests/test_sharding.py::test_eight_devices_bit_identical_and_sharded",
    "tests/test_sharding.py::test_two_processes_each_step_their_shard",
    "tests/test_template_plugin.py::test_template_own_tests_pass",
    "tests/test_template_plugin.py::test_template_passes_envhub_check",
    "tests/test_testing.py::test_batched_env_passes_and_skips_vmap_with_the_reason",
    "tests/test_wrappers.py::test_frame_stack_kit_batched",
    "tests/test_wrappers.py::test_structure_is_identical_from_init_reset_and_step",
    "tests/test_wrappers.py::test_time_limit_passes_the_kit_on_gymnax",
    "tests/test_wrappers_host.py::test_the_kit_passes_on_wrapped_host_envs",
    "tests/test_host.py::test_walk_passes_the_conformance_kit",
    "tests/test_docs_minimal.py::test_optional_modules_render_from_the_source_with_a_note_naming_their_extra",
    "tests/test_docs_minimal.py::test_the_core_pages_need_no_note_and_no_plugin",
    "tests/test_docs_minimal.py::test_long_signatures_are_formatted_without_black_or_ruff",
    "tests/test_interop_jaxmarl.py::test_scan_over_the_export_equals_envhub_rollout",
    "tests/test_interop_jaxmarl.py::test_jaxmarl_log_wrapper_runs_over_the_export_under_jit",
    "tests/test_interop_jaxmarl.py::test_pgx_scan_over_the_export_equals_envhub_rollout",
    "tests/test_interop_jaxmarl.py::test_pgx_game_avail_actions_turns_termination_and_reset",
    "tests/test_stoa_ppo.py::test_a_stoa_api_ppo_solves_cartpole_on_the_export",  # PPO on Stoa, 1M steps, 25-45 s
    "tests/test_sharding.py::test_brax_eight_devices_equal_to_float32_rounding",
    "tests/test_sharding.py::test_host_pools_one_per_process",
    "tests/test_sharding.py::test_multi_agent_eight_devices_bit_identical_and_sharded",  # 8-device worker job, 14 s
    "tests/test_docs.py::test_api_reference_is_the_public_surface_only",  # builds the API reference, 7.5 s
    "tests/test_pickling.py::test_async_vector_env_with_forkserver_steps_exports",  # forkserver workers, 3.7 s
    "tests/test_docs.py::test_api_reference_documents_every_public_name",
    "tests/test_rejax.py::test_rejax_trains_on_the_export",
    "tests/test_rejax.py::test_rejax_ppo_vmaps_over_envhub_params",
    "tests/test_rejax.py::test_rejax_trains_on_brax_inverted_pendulum",
    "tests/test_rejax.py::test_rejax_trains_on_xminigrid_empty",
    "tests/test_backends_quiet.py::test_make_init_step_print_nothing",
    "tests/test_backends_quiet.py::test_the_workers_print_nothing_outside_the_backends",  # the same 38 s fixture
    "docs/export.md::line-85",
    "docs/backends.md::line-143",
}


def quick(item: pytest.Item) -> bool:
    """Whether ``item`` is in the quick tier."""
    nodeid = item.nodeid
    parts = nodeid.split("::")
    if parts[0].startswith("plugins/"):
        folder = parts[0].split("/")[1]
        return len(parts) == 3 and parts[1] == KIT.get(folder)
    if any(item.get_closest_marker(name) is not None for name in ("release", "side_venv")):
        return False
    return nodeid.split("[")[0] not in SLOW


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if quick(item):
            item.add_marker(pytest.mark.quick)
