"""Autofix: fixture pairs (before -> after), idempotence, Ruff's --fix / --unsafe-fixes / --diff
contract, the seed cases round trip, and the fixes' own documentation."""

import json
import re
import shutil
from pathlib import Path

import pytest

from torchsync_lint.cli import docgen
from torchsync_lint.cli import main
from torchsync_lint.config import Config
from torchsync_lint import lint_source
from torchsync_lint.adopt.fixes import apply_fixes, fix_source
from torchsync_lint.rules.registry import all_rules

REPO = Path(__file__).resolve().parent.parent
FIXES = REPO / "tests" / "fixtures" / "fixes"
PAIRS = sorted(FIXES.glob("*_before.py"))
SEEDS = sorted((REPO / "examples" / "seed_cases").glob("*_before.py")) + sorted(
    (REPO.parent / "shared" / "cases").glob("*_before.py"))


def _code(path: Path) -> str:
    return path.name.split("_", 1)[0]


def _unsafe(source: str) -> bool:
    flag = source.splitlines()[0]
    assert flag in ("# fix: --fix", "# fix: --unsafe-fixes"), "a fixture's first line says which flag it needs"
    return flag.endswith("--unsafe-fixes")


def _fix(source: str, code: str, unsafe: bool, name: str = "module.py"):
    config = Config(select=[code])
    return fix_source(source, name, lint_source(source, name, config), config, unsafe)


@pytest.mark.parametrize("before", PAIRS, ids=lambda p: p.name[: -len("_before.py")])
def test_fixture_pair(before):
    code, source = _code(before), before.read_text(encoding="utf-8")
    expected = before.with_name(before.name.replace("_before.py", "_after.py")).read_text(encoding="utf-8")
    fixed, counts, error = _fix(source, code, _unsafe(source))
    assert error is None
    assert counts[code] >= 1 and set(counts) == {code}
    assert fixed == expected
    compile(fixed, before.name, "exec")
    # what is left of the rule has no fix the flag would apply
    left = lint_source(fixed, "module.py", Config(select=[code]))
    assert not [f for f in left if f.fix is not None and (f.fix.applicability == "safe" or _unsafe(source))]


@pytest.mark.parametrize("before", PAIRS, ids=lambda p: p.name[: -len("_before.py")])
def test_fixing_twice_changes_nothing(before):
    after = before.with_name(before.name.replace("_before.py", "_after.py")).read_text(encoding="utf-8")
    again, counts, error = _fix(after, _code(before), unsafe=True)
    assert (again, dict(counts), error) == (after, {}, None)


@pytest.mark.parametrize("before", [p for p in PAIRS if _unsafe(p.read_text(encoding="utf-8"))],
                         ids=lambda p: p.name[: -len("_before.py")])
def test_unsafe_fixes_need_the_flag(before):
    source = before.read_text(encoding="utf-8")
    fixed, counts, _ = _fix(source, _code(before), unsafe=False)
    assert fixed == source and not counts


def test_every_fix_is_documented_and_every_documented_fix_has_a_fixture():
    documented = {}
    for code, rule in all_rules().items():
        text = docgen.sections(rule).get("Fix safety", "")
        if "Autofix" in text:
            documented[code] = text
    assert documented, "no rule documents an autofix"
    assert documented.keys() == {_code(p) for p in PAIRS}
    for before in PAIRS:
        flag = "--unsafe-fixes" if _unsafe(before.read_text(encoding="utf-8")) else "--fix"
        assert flag in documented[_code(before)], f"{before.name}: the rule's 'Fix safety' does not name {flag}"


@pytest.mark.parametrize("value", ["3", "-2", "0.5", "True", "1e3"])
def test_full_keeps_the_dtype_of_tensor(value):
    torch = pytest.importorskip("torch")
    source = ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
              f"        return torch.tensor({value}, device=x.device)\n")
    fixed, counts, _ = _fix(source, "TSL202", unsafe=False)
    assert counts["TSL202"] == 1
    new = re.search(r"return (.*)\n", fixed).group(1)
    assert new.startswith("torch.full((),")
    x = torch.zeros(1)
    made = eval(new, {"torch": torch, "x": x})
    want = torch.tensor(eval(value), device=x.device)
    assert made.dtype == want.dtype and made.shape == want.shape and made.item() == want.item()


def test_nested_fixes_take_a_second_pass():
    source = ("import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
              "        return torch.repeat_interleave(x, torch.tensor([1, 2], device=x.device), dim=0)\n")
    config = Config()
    fixed, counts, _ = fix_source(source, "m.py", lint_source(source, "m.py", config), config, True)
    assert counts == {"TSL105": 1, "TSL202": 1}
    assert "output_size=3" in fixed and "self.register_buffer(" in fixed
    assert not lint_source(fixed, "m.py", config)


def test_a_changed_file_is_not_edited_blindly():
    source = (FIXES / "TSL201_arange_before.py").read_text(encoding="utf-8")
    findings = lint_source(source, "m.py", Config(select=["TSL201"]))
    shifted = source.replace("picked = pred[", "picked =  pred[")  # the text moved since linting
    assert apply_fixes(shifted, findings, unsafe=True) == (shifted, {})


def test_crlf_line_endings_are_kept():
    source = (FIXES / "TSL202_hoist_before.py").read_text(encoding="utf-8").replace("\n", "\r\n")
    fixed, counts, error = _fix(source, "TSL202", unsafe=True)
    assert error is None and counts["TSL202"] == 3
    assert "\n" not in fixed.replace("\r\n", "")
    assert fixed.replace("\r\n", "\n") == (FIXES / "TSL202_hoist_after.py").read_text(encoding="utf-8")


# -- the command line -----------------------------------------------------------------------
def _copy(tmp_path, *names):
    for name in names:
        shutil.copy(FIXES / name, tmp_path / name.replace("_before", ""))
    return tmp_path


def test_diff_prints_and_changes_nothing(tmp_path, capsys):
    _copy(tmp_path, "TSL201_arange_before.py")
    target = tmp_path / "TSL201_arange.py"
    before = target.read_bytes()
    assert main(["--diff", str(target)]) == 1
    out, err = capsys.readouterr()
    assert target.read_bytes() == before
    assert out.startswith(f"--- {target}\n+++ {target}\n")
    assert "+        picked = pred[torch.arange(target.shape[0], device=pred.device), target]" in out
    assert "Would fix 1 finding (TSL201: 1)." in err
    assert main(["--diff", "--select", "TSL108", str(target)]) == 0  # nothing to fix: exit 0


def test_fix_applies_safe_fixes_only_and_reports_what_is_left(tmp_path, capsys):
    _copy(tmp_path, "TSL201_arange_before.py", "TSL405_ex_before.py")
    assert main(["--fix", "--format", "json", str(tmp_path)]) == 1  # TSL405 is left: its fix is unsafe
    out, err = capsys.readouterr()
    assert (tmp_path / "TSL201_arange.py").read_text() == (FIXES / "TSL201_arange_after.py").read_text()
    assert (tmp_path / "TSL405_ex.py").read_text() == (FIXES / "TSL405_ex_before.py").read_text()
    assert "Fixed 1 finding (TSL201: 1); 4 unsafe fixes available with --unsafe-fixes (TSL405: 4)." in err
    left = json.loads(out)
    assert {f["code"] for f in left} == {"TSL405"}
    assert all(f["fix"]["applicability"] == "unsafe" for f in left)


def test_unsafe_fixes_with_fix(tmp_path, capsys):
    _copy(tmp_path, "TSL405_ex_before.py")
    assert main(["--fix", "--unsafe-fixes", str(tmp_path)]) == 0
    assert (tmp_path / "TSL405_ex.py").read_text() == (FIXES / "TSL405_ex_after.py").read_text()
    assert "Fixed 4 findings (TSL405: 4)." in capsys.readouterr().err


def test_unsafe_fixes_alone_changes_no_file(tmp_path, capsys):
    _copy(tmp_path, "TSL405_ex_before.py")
    assert main(["--unsafe-fixes", str(tmp_path)]) == 1
    assert (tmp_path / "TSL405_ex.py").read_text() == (FIXES / "TSL405_ex_before.py").read_text()


def test_json_says_what_a_fix_does(tmp_path, capsys):
    _copy(tmp_path, "TSL108_num_classes_before.py")
    main(["--format", "json", str(tmp_path)])
    found = json.loads(capsys.readouterr().out)
    by_line = {f["line"]: f for f in found}
    assert by_line[8]["fix"] == {"applicability": "safe", "message": "pass `num_classes=7`",
                                 "replacement": "F.one_hot(hours % 7, num_classes=7)"}
    assert "fix" not in by_line[9]  # only the user knows that count


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_round_trip_on_seed_cases(tmp_path, seed, capsys):
    target = tmp_path / seed.name
    shutil.copy(seed, target)
    before = lint_source(seed.read_text(encoding="utf-8"), seed.name)
    fixable = {f.code for f in before if f.fix is not None}
    main(["--fix", "--unsafe-fixes", str(target)])
    fixed = target.read_text(encoding="utf-8")
    compile(fixed, str(target), "exec")
    after = lint_source(fixed, seed.name)
    assert not [f for f in after if f.code in fixable], "fixed rules must lint clean"
    assert len(after) == len(before) - sum(1 for f in before if f.code in fixable)
    assert "EXPECT" in fixed  # the comments stay


def test_verify_fixes_checks_the_autofix():
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from torchsync_lint.verify import fixes

    source = "import torch\n\n\ndef step(x, d):\n    v = torch.tensor(0.5, device=d)\n    return x * v\n"
    [finding] = [f for f in lint_source(source, "m.py") if f.code == "TSL202"]
    wrapper = MetadataWrapper(cst.parse_module(source))
    where = wrapper.resolve(PositionProvider)
    [node] = [n for n, r in where.items() if isinstance(n, cst.Call)
              and (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)
              == (finding.line, finding.col, finding.end_line, finding.end_col)]
    [stmt] = [n for n in where if isinstance(n, cst.Assign)]
    spec = fixes.rewrite("TSL202", stmt, node, finding.line, 5, fix=finding.fix)
    assert spec["src"] == "v = torch.full((), 0.5, device=d)" and spec["autofix"]
    assert "none" in fixes.rewrite("TSL202", stmt, node, finding.line, 5)  # the rule alone has no local rewrite


def test_non_blocking_only_where_the_destination_is_a_gpu_device():
    source = ("import torch\n\n\ndef step(x, device, idtype):\n"
              "    a = torch.from_numpy(x).to(device)\n"
              "    b = torch.from_numpy(x).to(\"cuda:0\")\n"
              "    c = torch.from_numpy(x).to(\"meta\")\n"
              "    d = torch.from_numpy(x).to(idtype)\n"
              "    return a, b, c, d\n")
    config = Config(select=["TSL202"])
    fixed, _, _ = fix_source(source, "m.py", lint_source(source, "m.py", config), config, True)
    assert ".to(device, non_blocking=True)" in fixed and '.to("cuda:0", non_blocking=True)' in fixed
    assert '.to("meta")\n' in fixed and ".to(idtype)\n" in fixed  # a dtype, or no host-to-GPU copy
