"""The snippet children's lazy ``torch._dynamo`` (``verify.lazy``): an import that only binds a
function runs nothing; the first use imports everything for real, in a plain import's order, and
every value is the real module's."""

import importlib
import os
import subprocess
import sys
import textwrap

import pytest

from torchsync_lint.verify import lazy

PKG = "tsl_lazy_heavy"


@pytest.fixture
def heavy(tmp_path):
    root = tmp_path / "site"
    pkg = root / PKG
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(f"""
        import builtins
        builtins.TSL_LAZY_RAN.append("{PKG}")
        from . import utils  # the package runs its submodule, as torch._dynamo does
        """))
    (pkg / "utils.py").write_text(textwrap.dedent(f"""
        import builtins
        builtins.TSL_LAZY_RAN.append("{PKG}.utils")
        CONST = 3


        def plain(x):
            return x + CONST


        def rebound():
            return 1


        rebound = 5


        class Klass:
            pass


        def broken_later():
            return missing_name
        """))
    (pkg / "fails.py").write_text("raise ImportError('planted')\n")
    import builtins

    builtins.TSL_LAZY_RAN = []
    sys.path.insert(0, str(root))
    lazy.install((PKG,))
    try:
        yield builtins.TSL_LAZY_RAN
    finally:
        lazy.uninstall()
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PKG or m.startswith(PKG + ".")]:
            del sys.modules[name]
        del builtins.TSL_LAZY_RAN


def test_importing_a_function_runs_nothing_until_it_is_called(heavy):
    from tsl_lazy_heavy.utils import plain  # noqa: F401

    assert heavy == []
    assert lazy.is_lazy(sys.modules[PKG + ".utils"])
    assert plain(1) == 4
    assert heavy == [PKG, PKG + ".utils"]  # the package first, as a plain import runs them
    real = sys.modules[PKG + ".utils"]
    assert not lazy.is_lazy(real) and real.plain(1) == 4
    assert plain(2) == 5 and heavy == [PKG, PKG + ".utils"]  # nothing runs twice


def test_a_constant_runs_the_module_at_the_import(heavy):
    from tsl_lazy_heavy.utils import CONST

    assert CONST == 3
    assert heavy == [PKG, PKG + ".utils"]


@pytest.mark.parametrize("name, expected", [("rebound", 5), ("Klass", None)])
def test_a_name_bound_otherwise_is_the_real_value(heavy, name, expected):
    got = getattr(importlib.import_module(PKG + ".utils"), name)
    assert heavy == [PKG, PKG + ".utils"]
    if expected is not None:
        assert got == expected
    else:
        assert isinstance(got, type) and got.__module__ == PKG + ".utils"


def test_a_lazy_module_object_forwards_to_the_real_one(heavy):
    import tsl_lazy_heavy.utils as held

    assert heavy == []
    assert held.CONST == 3
    held.CONST = 10  # a setting through the old object reaches the real module
    assert sys.modules[PKG + ".utils"].CONST == 10
    assert held.plain(1) == 11
    assert sys.modules[PKG].utils is sys.modules[PKG + ".utils"]


def test_after_the_first_use_imports_are_plain(heavy):
    from tsl_lazy_heavy.utils import CONST  # noqa: F401

    with pytest.raises(ImportError, match="planted"):
        import tsl_lazy_heavy.fails  # noqa: F401


def test_a_failing_module_fails_at_its_first_use(heavy):
    import tsl_lazy_heavy.fails as f  # lazy: nothing ran yet

    with pytest.raises(ImportError, match="planted"):
        f.anything


def test_the_stand_in_reports_the_real_error(heavy):
    from tsl_lazy_heavy.utils import broken_later

    with pytest.raises(NameError):
        broken_later()


@pytest.mark.parametrize("src, ok", [
    ("def f(x):\n    return x\n", True),
    ("@decorator\ndef f(x):\n    return x\n", True),
    ("if X:\n    def f(x):\n        return x\n", False),  # not at the top level
    ("def f(x):\n    return x\nf = 3\n", False),
    ("def f(x):\n    return x\ndef f(y):\n    return y\n", False),
    ("from a import (\n    b,\n    f,\n)\ndef f(x):\n    return x\n", False),
    ("def f(x):\n    return x\ndef g():\n    global f\n    f = None\n", False),
    ("def f(x):\n    return x\nimport a as f\n", False),
    ("def fx(x):\n    return x\n", False),
])
def test_plain_function(src, ok):
    assert lazy.plain_function(src, "f") is ok


def test_off_by_environment(monkeypatch):
    from torchsync_lint.verify import child

    lazy.uninstall()
    monkeypatch.setenv(lazy.ENV_OFF, "1")
    child.lazy_imports()
    assert not any(isinstance(f, lazy.Finder) for f in sys.meta_path)
    monkeypatch.delenv(lazy.ENV_OFF)
    try:
        child.lazy_imports()
        assert any(isinstance(f, lazy.Finder) for f in sys.meta_path)
    finally:
        lazy.uninstall()


TORCH_CODE = textwrap.dedent("""
    import json, sys
    import torch
    lazy_on = sys.argv[1] == "1"
    if lazy_on:
        from torchsync_lint.verify import lazy
        lazy.install()
    from torch._dynamo.utils import is_compile_supported
    out = {"ran_before_call": "torch._dynamo.convert_frame" in sys.modules}
    out["cpu"] = is_compile_supported("cpu")
    out["meta"] = is_compile_supported("meta")
    out["ran_after_call"] = "torch._dynamo.convert_frame" in sys.modules
    import torch._dynamo
    out["is_compiling"] = torch._dynamo.is_compiling()
    out["config"] = type(torch._dynamo.config.cache_size_limit).__name__
    out["manual_seed_wrapped"] = torch.manual_seed is not torch.random.manual_seed
    print(json.dumps(out))
    """)


def test_torch_dynamo_lazy_gives_the_same_values():
    pytest.importorskip("torch")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    got = {}
    for flag in ("0", "1"):
        proc = subprocess.run([sys.executable, "-c", TORCH_CODE, flag], capture_output=True, text=True, env=env,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        got[flag] = __import__("json").loads(proc.stdout.strip().splitlines()[-1])
    assert got["1"]["ran_before_call"] is False  # the import statement ran none of torch._dynamo
    assert got["0"]["ran_before_call"] is True
    for key in ("cpu", "meta", "ran_after_call", "is_compiling", "config", "manual_seed_wrapped"):
        assert got["1"][key] == got["0"][key], key


DISABLE_CODE = textwrap.dedent("""
    import json, sys
    import torch
    from torchsync_lint.verify import lazy
    lazy.install()

    @torch.compiler.disable
    def f(x):
        return x + 1

    @torch.compiler.disable(recursive=False)
    def g(x):
        return x * 2

    out = {"before": [f(1), g(3), f.__name__], "ran_at_decoration": "torch._dynamo.convert_frame" in sys.modules}
    import torch._dynamo
    torch._dynamo.config.cache_size_limit  # the first real use: torch._dynamo runs now
    out["ran_after_use"] = "torch._dynamo.convert_frame" in sys.modules

    def h(x):
        return f(x) + g(x)

    out["after"] = [f(1), g(3), torch.compile(h, backend="eager")(torch.ones(2)).tolist()]
    print(json.dumps(out))
    """)


def test_compiler_disable_is_put_off_and_then_real():
    pytest.importorskip("torch")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", DISABLE_CODE], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = __import__("json").loads(proc.stdout.strip().splitlines()[-1])
    assert got["before"] == [2, 6, "f"]
    assert got["ran_at_decoration"] is False
    assert got["ran_after_use"] is True
    assert got["after"] == [2, 6, [4.0, 4.0]]
