"""``SpacesOfOne``: the spaces of one environment, declared once, and of the batch; mixed into both env bases."""

from __future__ import annotations

from envhub import spaces


class SpacesOfOne:
    """The spaces of one environment, given once (``_declare_spaces``), and of the batch (``num_envs``).

    Mixed into ``JaxEnvironment`` and ``HostEnvironment`` ahead of ``Environment``.
    """

    num_envs: int | None
    _spaces: dict[str, spaces.Space | None]

    def _declare_spaces(self, observation_space: spaces.Space | None, action_space: spaces.Space | None) -> None:
        self._spaces = {"observation": observation_space, "action": action_space}

    @property
    def single_observation_space(self) -> spaces.Space:
        """Observation space of one environment of the batch."""
        return self._declared("observation")

    @property
    def single_action_space(self) -> spaces.Space:
        """Action space of one environment of the batch."""
        return self._declared("action")

    @property
    def observation_space(self) -> spaces.Space:
        """Space of ``ts.obs`` (batched when ``num_envs`` is set)."""
        single = self.single_observation_space
        return single if self.num_envs is None else single.batch(self.num_envs)

    @property
    def action_space(self) -> spaces.Space:
        """Space of the ``action`` argument of ``step`` (batched when ``num_envs`` is set)."""
        single = self.single_action_space
        return single if self.num_envs is None else single.batch(self.num_envs)

    def _declared(self, kind: str) -> spaces.Space:
        space = self.__dict__.get("_spaces", {}).get(kind)
        if space is None:
            raise TypeError(
                f"{type(self).__name__} must pass {kind}_space= to its base class's __init__ "
                f"(or define single_{kind}_space)"
            )
        return space


__all__ = ["SpacesOfOne"]
