"""Documentation that cannot go stale: generated rule pages, rule examples, keys, flags, links."""

import re
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from torchsync_lint.cli import docgen
from torchsync_lint.cli import build_parser
from torchsync_lint.config import KEYS, Config
from torchsync_lint import lint_source
from torchsync_lint.rules.registry import all_rules
from torchsync_lint.rules.base import DOC_SECTIONS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
CODE_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def test_rule_pages_are_written_to_the_repositorys_docs():
    assert docgen.DOCS == DOCS / "rules"  # not a docs/ folder inside the package


def test_generated_rule_pages_are_current():
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint.cli.docgen", "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, "docs/rules is stale: run `python -m torchsync_lint.cli.docgen`\n" + proc.stderr


@pytest.mark.parametrize("damage", ["edit", "delete", "extra"])
def test_check_fails_when_stale(tmp_path, monkeypatch, capsys, damage):
    rules_dir = tmp_path / "rules"
    monkeypatch.setattr(docgen, "DOCS", rules_dir)
    assert docgen.main([]) == 0  # writes a fresh copy
    assert docgen.main(["--check"]) == 0
    page = rules_dir / "TSL001.md"
    if damage == "edit":
        page.write_text(page.read_text() + "\nhand edit\n")
    elif damage == "delete":
        page.unlink()
    else:
        (rules_dir / "TSL999.md").write_text("# a rule that no longer exists\n")
    assert docgen.main(["--check"]) == 1
    assert "stale:" in capsys.readouterr().err
    assert docgen.main([]) == 0 and docgen.main(["--check"]) == 0  # regenerating repairs it


def _block(rule, title):
    text = docgen.sections(rule).get(title, "")
    blocks = CODE_BLOCK.findall(text)
    assert blocks, f"{rule.code}: no ```python block under '## {title}'"
    return "\n".join(blocks)


def _codes(rule, source):
    # also turns on rules that are off by default; a cold-only rule is shown with --include-cold
    config = Config(select=[rule.code], include_cold=rule.cold_only)
    try:
        return [f.code for f in lint_source(source, f"{rule.code.lower()}_doc.py", config)]
    except SyntaxError as exc:
        pytest.fail(f"{rule.code}: the documented code does not parse: {exc}")


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_rule_docstring_sections(code):
    rule = all_rules()[code]
    titles = [line[3:].strip() for line in inspect.cleandoc(rule.__doc__ or "").splitlines()
              if line.startswith("## ")]
    assert titles == list(DOC_SECTIONS), f"{code}: sections must be exactly {DOC_SECTIONS}"


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_rule_example_is_flagged(code):
    rule = all_rules()[code]
    got = _codes(rule, _block(rule, "Example"))
    assert code in got, f"{code}: its '## Example' block, linted alone, gives {got}"


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_rule_use_instead_is_clean(code):
    rule = all_rules()[code]
    got = _codes(rule, _block(rule, "Use instead"))
    assert code not in got, f"{code}: its '## Use instead' block, linted alone, still gives {code}"


def test_configuration_page_names_every_key_and_flag():
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for key in KEYS:
        assert f"`{key}`" in text, f"docs/configuration.md does not document the key {key!r}"
    for action in build_parser()._actions:
        for flag in action.option_strings:
            if flag in ("-h", "--help") or flag.startswith("--verify"):
                continue  # --verify and its options are documented in docs/verify.md
            assert f"`{flag}" in text, f"docs/configuration.md does not document {flag}"


def test_flake8_options_are_documented():
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    source = (REPO / "torchsync_lint" / "flake8_plugin.py").read_text(encoding="utf-8")
    for option in re.findall(r'"(--tsl-[a-z-]+)"', source):
        assert f"`{option}" in text


def _markdown_files():
    return [REPO / "README.md"] + sorted(DOCS.glob("*.md")) + sorted((DOCS / "rules").glob("*.md"))


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        assert (page.parent / path).exists(), f"{page.name}: broken link {target}"


def test_readme_opens_with_the_two_commands_ci_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert first_block and readme.index("```bash") < readme.index("\n## ")
    commands = [line for line in first_block.group(1).splitlines() if line.strip()]
    assert len(commands) == 2
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command in ci, f".ci/run does not run the README's command {command!r}"
    assert "pytest" in commands[1]


def test_tox_runs_the_same_tests():
    tox = (REPO / "tox.ini").read_text(encoding="utf-8")
    assert "py311" in tox and "extras = test" in tox and "python -m pytest -q" in tox


def test_precommit_hook_definition():
    text = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    for line in ("- id: torchsync-lint", "entry: torchsync-lint", "language: python", "types: [python]"):
        assert line in text


def test_demo_example_has_findings():
    source = (REPO / "examples" / "lint_demo.py").read_text(encoding="utf-8")
    assert lint_source(source, "lint_demo.py")


def test_rule_pages_link_only_to_what_ships():
    """--explain and the editor's hover show a rule's page wherever the package is installed:
    it links other rule pages or URLs, and names a repository path (docs, benchmarks, tests, which
    do not ship) only as a link to the repository or as code."""
    from torchsync_lint.check.noqa import META_RULES
    from torchsync_lint.cli.docgen import meta_markdown, rule_markdown
    from torchsync_lint.rules.registry import all_rules

    pages = [rule_markdown(r) for r in all_rules().values()] + [meta_markdown(m) for m in META_RULES]
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page):
            assert target.startswith("https://") or re.fullmatch(r"TSL\d{3}\.md(#[\w-]+)?", target), target
            repo_path = re.match(r"https://github\.com/torchsync-lint/torchsync-lint/(?:blob|tree)/main/([^#]+)", target)
            if repo_path:  # a link into the repository names a file or folder that is there
                assert (REPO / repo_path.group(1)).exists(), target
        prose = re.sub(r"```.*?```", "", page, flags=re.S)
        prose = re.sub(r"`[^`]*`", "", prose)
        prose = re.sub(r"\[[^\]]*\]\([^)]*\)", "", prose)
        bare = re.findall(r"(?<![\w/.])(?:docs|bench|tests)/[\w./-]*\w", prose)
        assert bare == [], f"{page.splitlines()[1]}: {bare}"
