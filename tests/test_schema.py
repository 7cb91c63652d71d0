"""The JSON Schema for [tool.torchsync-lint]: generated from the loader's keys (stale -> fail),
and it agrees with the loader: what the loader accepts validates, what it rejects does not."""

import json
import sys

import pytest

from torchsync_lint.cli import schema
from torchsync_lint.config import KEYS, ConfigError
from torchsync_lint.run.settings import load

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

jsonschema = pytest.importorskip("jsonschema")
VALIDATOR = jsonschema.Draft202012Validator(json.loads(schema.SCHEMA.read_text(encoding="utf-8")))


def test_schema_file_is_generated_and_current():
    assert schema.main(["--check"]) == 0, "run `python -m torchsync_lint.cli.schema`"
    jsonschema.Draft202012Validator.check_schema(json.loads(schema.SCHEMA.read_text(encoding="utf-8")))


def test_every_key_the_loader_knows_is_in_the_schema_with_its_documentation():
    props = json.loads(schema.SCHEMA.read_text())["$defs"]["torchsync-lint"]["properties"]
    assert set(props) == set(KEYS)
    assert all(p["description"] for p in props.values())


GOOD = [
    '[tool.torchsync-lint]\nselect = ["TSL", "tsl1"]\nignore = ["TSL006"]\nextend-select = ["TSL404"]\n',
    '[tool.torchsync-lint]\nhot-functions = ["train_one_epoch"]\ncache = false\ncache-dir = "c"\n',
    '[tool.torchsync-lint.per-file-ignores]\n"tests/*" = ["TSL"]\n"a.py" = "TSL001,TSL2"\n',
    '[tool.torchsync-lint]\nexclude = ["x"]\nextend-exclude = ["y"]\nrespect-gitignore = false\nforce-exclude = true\n',
    '[tool.other]\nanything = 1\n',
]
BAD = [
    '[tool.torchsync-lint]\nselec = ["TSL"]\n',  # unknown key
    '[tool.torchsync-lint]\nselect = "TSL"\n',  # not a list
    '[tool.torchsync-lint]\ninclude-cold = "yes"\n',
    '[tool.torchsync-lint]\nignore = ["E501"]\n',  # not a TSL prefix
    '[tool.torchsync-lint]\nhot-functions = [1]\n',
    '[tool.torchsync-lint.per-file-ignores]\n"tests/*" = 3\n',
]


def _loads(tmp_path, text):
    p = tmp_path / "pyproject.toml"
    p.write_text(text)
    return p, tomllib.loads(text)


@pytest.mark.parametrize("text", GOOD)
def test_accepted_by_both(tmp_path, text):
    path, data = _loads(tmp_path, text)
    load(str(path))
    assert list(VALIDATOR.iter_errors(data)) == []


@pytest.mark.parametrize("text", BAD)
def test_rejected_by_both(tmp_path, text):
    path, data = _loads(tmp_path, text)
    with pytest.raises(ConfigError):
        load(str(path))
    assert list(VALIDATOR.iter_errors(data)) != []


def test_this_repositorys_own_settings_validate():
    data = tomllib.loads((schema.REPO / "pyproject.toml").read_text())
    assert list(VALIDATOR.iter_errors(data)) == []
