"""torchsync-lint on its own package: no findings and no errors, with every rule and cold code too."""

from pathlib import Path

from torchsync_lint import cli
from torchsync_lint.rules.registry import all_rules

REPO = Path(__file__).resolve().parent.parent


def test_self_lint_is_clean(capsys, monkeypatch):
    monkeypatch.chdir(REPO)  # the project's own pyproject.toml applies
    rc = cli.main(["--include-cold", "--select", ",".join(all_rules()), "torchsync_lint"])
    out, err = capsys.readouterr()
    assert (rc, out, err) == (0, "All checks passed.\n", "")
