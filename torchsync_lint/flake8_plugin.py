"""flake8 plugin: ``flake8 --select TSL`` reports what ``torchsync-lint FILE`` reports.

flake8 picks a plugin's kind from its ``__init__`` parameter names: asking for ``tree`` makes this
an AST plugin, run once per file that CPython could parse. We never look at that tree (the rules
need LibCST's); we parse the text of ``lines`` once with LibCST through the engine's one-file path.
flake8 applies its own ``# noqa``, ``--extend-ignore`` and ``per-file-ignores``; the file-level
``# torchsync-lint: noqa`` is applied here, since flake8 does not know it. A file the CLI reports
an error for (it cannot be decoded, LibCST cannot or must not parse it, a bug of ours) is one
``TSL000`` error for that file, at its line.
"""

from __future__ import annotations

import logging
import os
from typing import Iterator, List, Optional, Sequence, Tuple, Type

from torchsync_lint import __version__

# Nothing heavy at load time: flake8 imports every installed plugin on every run, and a run whose
# selection cannot report a TSL code (``flake8 --select E,F``) must cost what it costs without
# this plugin. The linter is imported by the first file that needs it.

LOG = logging.getLogger(__name__)
FILE_ERROR = "TSL000"  # no rule's code: a file the plugin could not check
_CODES = tuple(f"TSL{n:03d}" for n in range(1000))  # every code a rule can have, TSL000 included


def lint_source(*args, **kwargs):
    """``check.lint_source.lint_source``, imported on first use."""
    from torchsync_lint.check.lint_source import lint_source as real

    return real(*args, **kwargs)


def project_for(path: str):
    """``run.ondemand.project_for``, imported on first use."""
    from torchsync_lint.run.ondemand import project_for as real

    return real(path)


def tsl_selected(options) -> bool:
    """Whether flake8's selection (``--select``, ``--extend-select``, ``--ignore``, the default
    selection plugins extend) can report some TSL code: flake8's own decision engine, asked for
    every code of the form TSLnnn. Options without flake8's full set (a test's namespace) count
    as selected."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
        return any(engine.decision_for(code) is Decision.Selected for code in _CODES)
    except Exception:  # not flake8's namespace, or another flake8: check, as before
        return True


def _tsl_prefixes(values: Sequence[str]) -> List[str]:
    return [v.strip().upper() for v in values or () if v.strip().upper().startswith("TSL")]


class TorchSyncChecker:
    name = "torchsync-lint"
    version = __version__

    # set from flake8's options and config files by parse_options
    hot_functions: Tuple[str, ...] = ()
    cold_functions: Tuple[str, ...] = ()
    include_cold: bool = False
    select: Tuple[str, ...] = ()
    enabled: bool = True  # False when flake8's selection cannot report any TSL code

    def __init__(self, tree, lines: Sequence[str], filename: str = "stdin") -> None:
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager) -> None:
        manager.add_option(
            "--tsl-hot-functions", default="", parse_from_config=True, comma_separated_list=True,
            help="torchsync-lint: functions (names or dotted keys) to treat as hot, comma separated",
        )
        manager.add_option(
            "--tsl-cold-functions", default="", parse_from_config=True, comma_separated_list=True,
            help="torchsync-lint: functions to treat as cold (set-up code), comma separated",
        )
        manager.add_option(
            "--tsl-include-cold", action="store_true", default=False, parse_from_config=True,
            help="torchsync-lint: also report syncs in code that runs once (module level, __init__)",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        cls.hot_functions = tuple(options.tsl_hot_functions or ())
        cls.cold_functions = tuple(options.tsl_cold_functions or ())
        cls.include_cold = bool(options.tsl_include_cold)
        cls.enabled = tsl_selected(options)
        # Rules that are off by default run only when a selector names them more precisely than
        # "TSL" (as with the CLI); flake8 itself filters everything else by --select/--ignore.
        explicit = _tsl_prefixes(getattr(options, "select", None) or ()) + _tsl_prefixes(
            getattr(options, "extend_select", None) or ())
        cls.select = tuple(["TSL"] + [p for p in explicit if p != "TSL"]) if explicit else ()

    def _config(self):
        from torchsync_lint.config import Config

        return Config(select=list(self.select), hot_functions=list(self.hot_functions),
                      cold_functions=list(self.cold_functions), include_cold=self.include_cold)

    def _module_name(self) -> str:
        from torchsync_lint.check.source import module_name_for

        if os.path.isfile(self.filename):
            return module_name_for(self.filename)[0]  # as the CLI names it, for the same hot paths
        return os.path.splitext(os.path.basename(self.filename))[0] or "stdin"

    def _project(self):
        """The project around the file, for values and hot paths from its other files
        (``inference.ondemand`` says how it is found and bounded); None for stdin."""
        if not os.path.isfile(self.filename):
            return None
        try:
            project = project_for(self.filename)
        except (OSError, RecursionError) as exc:
            LOG.warning("torchsync-lint: no project for %s: %s", self.filename, exc)
            return None
        if project is not None:
            project.current = os.path.abspath(self.filename)
        return project

    def _undecodable(self, source: str) -> Optional[str]:
        """The CLI's error for a file it cannot decode. flake8 reads such a file as latin-1 (and
        would check it); CPython, like the CLI, refuses it. Only text that is not ASCII can have
        come from that fallback; stdin cannot be read again."""
        if source.isascii() or not os.path.isfile(self.filename):
            return None
        from torchsync_lint.check.source import decode

        try:
            with open(self.filename, "rb") as fh:
                decode(fh.read(), self.filename)
        except (OSError, ValueError) as exc:
            return str(exc)
        return None

    def run(self) -> Iterator[Tuple[int, int, str, Type["TorchSyncChecker"]]]:
        # A file the CLI cannot check is one TSL000 error for that file here too (flake8 fails):
        # one that cannot be decoded, that LibCST cannot (or must not) parse, a bug of ours.
        # flake8 would stop the whole run, every file, on an exception.
        if not self.enabled:
            return
        from torchsync_lint.check.report import RECURSION_ERROR, internal_error
        from torchsync_lint.check.lint_source import SourceError

        source = "".join(self.lines)
        try:
            error = self._undecodable(source)
            if error is not None:
                yield 1, 0, f"{FILE_ERROR} {error}", type(self)
                return
            findings = lint_source(source, self.filename, self._config(),
                                   module_name=self._module_name(), inline_noqa=False, project=self._project())
        except SourceError as exc:
            # CPython parsed it (flake8 gave us a tree) but we cannot check it
            LOG.warning("torchsync-lint: skipped %s: %s", self.filename, exc)
            err = exc.error
            yield err.line or 1, (err.col or 1) - 1, f"{FILE_ERROR} {err.message}", type(self)
            return
        except RecursionError:
            yield 1, 0, f"{FILE_ERROR} {RECURSION_ERROR}", type(self)
            return
        except Exception as exc:
            LOG.debug("torchsync-lint: internal error in %s", self.filename, exc_info=True)
            yield 1, 0, f"{FILE_ERROR} {internal_error(exc)}", type(self)
            return
        for f in findings:
            yield f.line, f.col - 1, f"{f.code} {f.message}", type(self)
