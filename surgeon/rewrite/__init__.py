"""rewrite/: what a fuse changes. The pattern authoring API (``pattern.py``, ``template.py``,
``match.py``, ``context.py``, ``replacement.py``), the plugin set and what a plugin brings for a
custom op (``plugins.py``, ``customop.py``), the driver that matches and rewrites
(``driver.py``, with ``capture.py``, ``repair.py`` and the shapes it declares, ``shapes.py``)
and the report (``report.py``).

May import: ``graph/``, ``io/``, ``visual/`` (``Report.to_html`` only), ``errors``,
``progress``, ``reportfields``; never ``runtime/``, ``validate/``, ``deploy/`` or ``lint/``.
"""
