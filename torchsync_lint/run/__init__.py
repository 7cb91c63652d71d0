"""The tree run: which files (``files``), in which order (``import_order``), on which processes
(``workers``), through the cache (``cache``, ``cached_check``, ``report_data``), with the whole
project's interfaces (``project_pass``, ``ondemand`` for one file in an editor), from which
settings (``settings``); ``tree.lint_paths`` runs it all."""
