"""Constants hoisted into ``__init__`` as buffers (TSL202's unsafe fix): placed as LibCST nodes
through a codemod visitor (``adopt.buffers``), named after what they are assigned to, never where
``self`` is not bound, and never under a name the class already uses."""

import textwrap

import libcst as cst
from libcst.codemod import CodemodContext

from torchsync_lint import lint_source
from torchsync_lint.adopt.buffers import AddBuffersVisitor, buffer_statement
from torchsync_lint.adopt.fixes import fix_source
from torchsync_lint.config import Config

CONFIG = Config(select=["TSL202"], include_cold=True)


def _fix(source: str):
    source = textwrap.dedent(source)
    fixed, counts, error = fix_source(source, "m.py", lint_source(source, "m.py", CONFIG), CONFIG, unsafe=True)
    assert error is None
    compile(fixed, "m.py", "exec")
    return fixed, counts


def test_names_follow_the_target_an_annotation_or_a_keyword():
    fixed, counts = _fix("""\
        import torch
        import torch.nn as nn


        class A(nn.Module):
            def forward(self, x):
                scale: torch.Tensor = torch.tensor([1.0, 2.0]).cuda()
                y = nn.functional.linear(x, weight=torch.tensor([[1.0, 2.0]]).cuda())
                return y * scale * torch.tensor([3.0]).cuda()
    """)
    assert counts == {"TSL202": 3}
    assert 'self.register_buffer("scale_const", torch.tensor([1.0, 2.0]), persistent=False)' in fixed
    assert 'self.register_buffer("weight_const", torch.tensor([[1.0, 2.0]]), persistent=False)' in fixed
    assert 'self.register_buffer("const_tensor", torch.tensor([3.0]), persistent=False)' in fixed
    assert "scale: torch.Tensor = self.scale_const\n" in fixed and "weight=self.weight_const)" in fixed


def test_a_name_the_class_uses_only_in_a_string_is_not_taken_again():
    fixed, _ = _fix("""\
        import torch
        import torch.nn as nn


        class A(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("shift_const", torch.zeros(1))

            def forward(self, x):
                shift = torch.tensor([3.0]).cuda()
                return x + shift + getattr(self, "shift_const")
    """)
    assert "shift = self.shift_const_2\n" in fixed
    assert 'self.register_buffer("shift_const_2", torch.tensor([3.0]), persistent=False)' in fixed


def test_a_default_argument_is_not_hoisted_where_self_is_unbound():
    source = """\
        import torch
        import torch.nn as nn


        class A(nn.Module):
            def forward(self, x, w=torch.tensor([1.0, 2.0]).cuda()):
                return x * w * torch.tensor([3.0]).cuda()
    """
    fixed, counts = _fix(source)
    assert counts == {"TSL202": 1}  # the body's constant only
    assert "def forward(self, x, w=torch.tensor([1.0, 2.0]).cuda()):" in fixed
    assert "return x * w * self.const_tensor" in fixed


def test_a_new_init_passes_its_arguments_on_below_a_project_base_class():
    fixed, _ = _fix("""\
        import torch
        import torch.nn as nn


        class Base(nn.Module):
            def __init__(self, k):
                super().__init__()
                self.k = k


        class A(Base):
            \"\"\"Doc.\"\"\"

            def forward(self, x):
                return x * torch.tensor([1.0, 2.0]).cuda()
    """)
    assert textwrap.dedent('''\
        class A(Base):
            """Doc."""

            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.register_buffer("const_tensor", torch.tensor([1.0, 2.0]), persistent=False)

            def forward(self, x):
                return x * self.const_tensor
    ''') in fixed


def test_an_init_without_super_init_gets_no_buffer():
    source = """\
        import torch
        import torch.nn as nn


        class A(nn.Module):
            def __init__(self):
                self.k = 1

            def forward(self, x):
                return x * torch.tensor([1.0, 2.0]).cuda()
    """
    fixed, counts = _fix(source)
    assert (fixed, dict(counts)) == (textwrap.dedent(source), {})


def test_the_visitor_is_a_codemod_like_libcsts_own():
    """Planned in a CodemodContext, inserted by transform_module, as AddImportsVisitor works."""
    module = cst.parse_module("class A(Module):\n    def f(self):\n        pass\n\n\nclass B:\n    pass\n")
    context = CodemodContext()
    statement = buffer_statement("w_const", "torch.tensor(\n    [1.0, 2.0],\n)")
    AddBuffersVisitor.add_needed_buffers(context, ("A", 1), "", [statement])
    out = AddBuffersVisitor(context).transform_module(module).code
    assert out == ("class A(Module):\n    def __init__(self):\n        super().__init__()\n"
                   '        self.register_buffer("w_const", torch.tensor(\n            [1.0, 2.0],\n        ), '
                   "persistent=False)\n\n    def f(self):\n        pass\n\n\nclass B:\n    pass\n")
