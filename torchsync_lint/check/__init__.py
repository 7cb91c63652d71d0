"""The file check: one file's text to findings. Decode and guard (``source``, ``parse_guard``),
parse once, index and run every rule in one walk (``file``, ``walker``), position what was found
(``positions``), label it (``classify``) and drop what the user silenced (``noqa``, ``suppress``).
``lint_source`` is the one-file API. Never imports the tree run (``run/``)."""
