"""Interactive guide (Dash app) and static reports (HTML / PNG) for shardplan estimates.

* :mod:`shardplan.web.charts`: the numbers behind each chart and the Plotly figure builders
  (pure functions of an :class:`~shardplan.cost.step.Estimate`, no Dash);
* :mod:`shardplan.web.app`: the Dash app behind ``shardplan serve``;
* :mod:`shardplan.web.report`: ``shardplan report`` (self-contained HTML or matplotlib PNGs).

This package needs the ``web`` extra (plotly, dash, matplotlib); the core planner never imports it.
"""
