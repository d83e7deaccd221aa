"""The ground floor: what every environment is and obeys, with no host callback and no registry.

``env`` (the ``Environment`` ABC), ``types`` (``TimeStep`` and the done rule), ``action_check`` (what an
invalid action is) and ``checking`` (where it is checked), ``arguments`` (the int >= 1 rule), ``kwargs``
(declaring ``make`` keywords), ``drawing`` (what ``render`` returns), ``loop`` (an env stepped from Python),
``tree``, ``exporting`` and ``pickling``. Everything above imports from here; nothing here imports from above.
"""
