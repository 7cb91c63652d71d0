"""Settings resolution: ``[tool.torchsync-lint]`` in the nearest pyproject.toml, checked key by key,
then layered with the command line's selectors the way Ruff layers them (``resolve_selection``).

Every malformed setting raises ``ConfigError`` with one line that names the file and the key; the
CLI prints it and exits 2.
"""

from __future__ import annotations

import os
import pkgutil
import re
import sys
from functools import lru_cache
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from torchsync_lint.catalog import set_extra_sync_calls
from torchsync_lint.check.noqa import META_RULES
from torchsync_lint.config import CODE_KEYS, KEYS, TABLE, TYPE_NAMES, Config, ConfigError, RuleSelection
from torchsync_lint.run import rule_table
import torchsync_lint.rules as rules_package  # the package's face only: no rule, no LibCST


# -- rule codes ---------------------------------------------------------------------------------

RULE_MODULE = re.compile(r"^tsl\d{3}_")  # as ``rules.registry`` finds them


class RuleInfo(NamedTuple):
    name: str
    message: str
    default_enabled: bool


@lru_cache(maxsize=None)
def rule_info() -> Dict[str, RuleInfo]:
    """Every rule's code -> name, message, default. From the generated ``rule_table`` while the
    rules package holds the modules it was generated from (a listing, no import): settings, the
    summary and SARIF then load no rule; else (a rule added or removed since) from the rules."""
    modules = tuple(sorted(m.name for m in pkgutil.iter_modules(rules_package.__path__) if RULE_MODULE.match(m.name)))
    if modules == rule_table.MODULES:
        return {code: RuleInfo(*row) for code, row in rule_table.RULES.items()}
    from torchsync_lint.rules.registry import all_rules  # only for a stale table: importing every rule costs start-up

    return {code: RuleInfo(r.name, r.message, r.default_enabled) for code, r in all_rules().items()}


def rule_defaults() -> Dict[str, bool]:
    """Every code we can report -> on by default; the rules' and the meta codes' (unused noqa)."""
    out = {code: rule.default_enabled for code, rule in rule_info().items()}
    out.update({rule.code: rule.default_enabled for rule in META_RULES})
    return dict(sorted(out.items()))


def check_code(code: Any, where: str) -> str:
    """``code`` upper-cased if it is a prefix of some code we report; else a ConfigError."""
    if not isinstance(code, str):
        raise ConfigError(f"{where}: expected a code prefix like 'TSL' or 'TSL101', got {type(code).__name__} {code!r}")
    up = code.strip().upper()
    if not up.startswith("TSL") or not (up[3:].isdigit() or up[3:] == ""):
        raise ConfigError(f"{where}: {code!r} is not a code prefix like 'TSL' or 'TSL101'")
    if not any(known.startswith(up) for known in rule_defaults()):
        raise ConfigError(f"{where}: {code!r} matches no rule (see --list-rules)")
    return up


def _codes_of(selector: str, selecting: bool) -> List[str]:
    """Codes a selector names. ``TSL`` alone selects the default set only (opinionated rules need
    a longer prefix); ignoring ``TSL`` ignores everything."""
    defaults = rule_defaults()
    return [c for c, on in defaults.items()
            if c.startswith(selector) and (on or not selecting or len(selector) > len("TSL"))]


def resolve_selection(layers: Sequence[RuleSelection]) -> FrozenSet[str]:
    """The enabled codes, Ruff's way: layers apply in order (pyproject, then command line); a layer
    with ``select`` starts afresh, one without adds to / removes from what came before. Inside a
    layer, selectors apply from the least specific prefix to the most specific, ``ignore`` after
    ``select`` at the same length, so the more specific one wins and ``ignore`` wins a tie:
    ``--ignore TSL0 --extend-select TSL003`` runs TSL003."""
    enabled = {c for c, on in rule_defaults().items() if on}
    for layer in layers:
        updates: Dict[str, bool] = {}
        selectors = (layer.select or []) + layer.extend_select
        for length in range(3, 7):
            for s in selectors:
                if len(s) == length:
                    updates.update((c, True) for c in _codes_of(s, True))
            for s in layer.ignore:
                if len(s) == length:
                    updates.update((c, False) for c in _codes_of(s, False))
        if layer.select is not None:
            enabled = {c for c, on in updates.items() if on}
        else:
            for c, on in updates.items():
                (enabled.add if on else enabled.discard)(c)
    return frozenset(enabled)


def apply_selection(cfg: Config) -> Config:
    """Resolve ``cfg.layers`` into ``enabled`` and the explicit code list the engine reads."""
    cfg.enabled = resolve_selection(cfg.layers)
    codes = sorted(cfg.enabled)
    # The engine reads prefixes (empty select = the default set): give it exact codes, or
    # select-and-ignore everything when nothing is left.
    cfg.select, cfg.ignore = (codes, []) if codes else (["TSL"], ["TSL"])
    return cfg


# -- the pyproject.toml -------------------------------------------------------------------------


def _read(path: str) -> Dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 (byte {exc.start}); TOML files must be UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply to read") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _has_our_table(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return False
    if b"torchsync-lint" not in raw:
        return False
    try:
        data = _read(path)
    except ConfigError:
        return True  # it means to configure us: let load() report the error
    tool = data.get("tool")
    return not isinstance(tool, dict) or "torchsync-lint" in tool


def find_pyproject(start: str) -> Optional[str]:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.torchsync-lint]`` table."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(d, "pyproject.toml")
        if os.path.isfile(candidate) and _has_our_table(candidate):
            return candidate
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _type_error(where: str, expected: str, value: Any) -> ConfigError:
    return ConfigError(f"{where}: expected {expected}, got {type(value).__name__} {value!r}")


def _strings(where: str, value: Any) -> List[str]:
    if not isinstance(value, list):
        raise _type_error(where, "a list of strings", value)
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _type_error(f"{where}[{i}]", "a string (the value is a list of strings)", item)
    return value


def _per_file_ignores(where: str, value: Dict[str, Any]) -> Dict[str, List[str]]:
    out = {}
    for pattern, codes in value.items():
        at = f"{where}.{pattern}"
        if isinstance(codes, str):
            codes = [c for c in codes.replace(",", " ").split() if c]
        if not isinstance(codes, list):
            raise _type_error(at, "a list of codes", codes)
        out[pattern] = [check_code(c, at) for c in codes]
    return out


def load(pyproject: Optional[str]) -> Config:
    cfg = Config()
    if pyproject is None:
        return apply_selection(cfg)
    cfg.source = pyproject
    cfg.root = os.path.dirname(os.path.abspath(pyproject))
    data = _read(pyproject)
    tool = data.get("tool")
    if tool is None:
        return apply_selection(cfg)
    if not isinstance(tool, dict):
        raise ConfigError(f"{pyproject}: [tool] must be a table, got {type(tool).__name__} {tool!r}")
    section = tool.get("torchsync-lint")
    if section is None:
        return apply_selection(cfg)
    if not isinstance(section, dict):
        raise ConfigError(f"{pyproject}: {TABLE} must be a table, got {type(section).__name__} {section!r}")
    layer = RuleSelection()
    for key, value in section.items():
        where = f"{pyproject}: {TABLE} {key}"
        if key not in KEYS:
            raise ConfigError(f"{pyproject}: {TABLE} unknown key {key!r} (known: {', '.join(sorted(KEYS))})")
        attr, typ = KEYS[key]
        if not isinstance(value, typ):
            raise _type_error(where, f"a {TYPE_NAMES[typ]}", value)
        if key in CODE_KEYS:
            codes = [check_code(c, f"{where}[{i}]") for i, c in enumerate(value)]
            if key == "select":
                layer.select = codes
            elif key == "extend-select":
                layer.extend_select = codes
            else:
                layer.ignore = codes
            continue
        if key == "per-file-ignores":
            value = _per_file_ignores(where, value)
        elif typ is list:
            value = _strings(where, value)
        if attr == "hot_functions":  # `hot` and `hot-functions` add up
            value = list(dict.fromkeys(cfg.hot_functions + value))
        if key == "cache-dir":
            cfg.cache_dir_refused = _outside_project(where, value, cfg.root)
        setattr(cfg, attr, value)
    cfg.layers = [layer]
    _register_extra_sync_calls(pyproject, cfg.extra_sync_calls)
    return apply_selection(cfg)


def _outside_project(where: str, value: str, root: str) -> Optional[str]:
    """A repository's settings may not make the linter write outside the repository (a cloned
    project with ``cache-dir = "/home/you/.ssh"``): ``cache-dir`` must resolve, links followed,
    to a folder inside the configuration's folder; else the message refusing it. ``--cache-dir``
    on the command line may point anywhere: that is the user's own choice."""
    real_root = os.path.realpath(root)
    try:
        target = os.path.realpath(os.path.join(root, value))
    except ValueError:  # a null byte: no path at all
        raise ConfigError(f"{where}: {value!r} is not a path") from None
    if os.path.commonpath([real_root, target]) != real_root:
        return (f"{where}: {value!r} is outside the project ({root}); a repository's settings may only "
                "keep the cache inside it (give --cache-dir on the command line to put it elsewhere)")
    return None


def _register_extra_sync_calls(pyproject: str, names: List[str]) -> None:
    """Check the dotted names and hand them to TSL110 (through the environment: worker processes too)."""
    for i, name in enumerate(names):
        if not all(part.isidentifier() for part in name.split(".")) or "." not in name:
            raise ConfigError(f"{pyproject}: {TABLE} extra-sync-calls[{i}]: {name!r} is not a qualified name "
                              "like 'mylib.ops.nms'")
    set_extra_sync_calls(names)


def code_enabled(cfg: Config, code: str) -> bool:
    """Whether ``code`` runs under ``cfg`` (resolved from its layers, or from select/ignore prefixes)."""
    if cfg.enabled is not None:
        return code in cfg.enabled
    return code in resolve_selection([RuleSelection(cfg.select or None, [], list(cfg.ignore))])
