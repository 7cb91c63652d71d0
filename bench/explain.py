"""What inference holds at a line: the value of every expression of the statements that start there.

    python bench/explain.py ROOT FILE:LINE [FILE:LINE ...]

ROOT is linted as one project (as the CLI would, project pass included); then each FILE is checked
again with the whole project at hand and every sub-expression of the statement at LINE is printed
with its inferred value. A developer's tool for reading misses off bench/score_corpus.py reports.
"""

from __future__ import annotations

import json
import os
import sys

import libcst as cst

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from torchsync_lint.check import file as file_check  # noqa: E402
from torchsync_lint.config import Config  # noqa: E402
from torchsync_lint.check.report import Options  # noqa: E402
from torchsync_lint.run.cached_check import check_file  # noqa: E402
from torchsync_lint.run.files import iter_python_files  # noqa: E402
from torchsync_lint.inference.project import Project  # noqa: E402
from torchsync_lint.run.project_pass import project_pass  # noqa: E402
from torchsync_lint.rules.base import Rule  # noqa: E402

_EMPTY = cst.Module([])


def _probe(wanted: str):
    class Probe(Rule):
        code = "TSL999"
        name = "probe"
        message = "probe"

        def on_statement(self, node) -> None:
            first = _EMPTY.code_for_node(node).strip().splitlines()[0].strip()
            if first != wanted:
                return
            print(f"  function: {self.ctx.function.key if self.ctx.function else None}")
            seen = set()

            class Exprs(cst.CSTVisitor):
                def on_visit(inner, n) -> bool:
                    if isinstance(n, cst.BaseExpression) and not isinstance(n, (cst.SimpleString, cst.Integer)):
                        code = _EMPTY.code_for_node(n).strip()
                        if code not in seen and len(code) < 100:
                            seen.add(code)
                            print(f"    {code:60} {self.ctx.value(n)}")
                    return not isinstance(n, (cst.IndentedBlock,))

            node.visit(Exprs())

        visit_SimpleStatementLine = on_statement
        visit_If = on_statement
        visit_While = on_statement
        visit_For = on_statement

    return Probe


def main(argv) -> int:
    root, targets = argv[0], argv[1:]
    config = Config()
    options = Options(tuple(config.select), tuple(config.ignore), (), ())
    saved = os.path.join("/tmp", "explain-" + os.path.abspath(root).replace("/", "_") + ".json")
    if os.path.exists(saved):  # a developer's tool: delete it when the linter or the tree changes
        with open(saved) as fh:
            interfaces = json.load(fh)
    else:
        files = [p for p, _ in iter_python_files([root], config)]
        reports = [check_file(f, options) for f in files]
        reports = project_pass(reports, options, 2)
        interfaces = {r.interface["module"]: r.interface for r in reports if r.interface is not None}
        with open(saved, "w") as fh:
            json.dump(interfaces, fh)
    project = Project(interfaces)
    for target in targets:
        path, line = target.rsplit(":", 1)
        path = path if os.path.exists(path) else os.path.join(root, path)
        wanted = open(path, encoding="utf-8").read().splitlines()[int(line) - 1].strip()
        print(f"{target}: {wanted}")
        original = file_check.select_rules
        file_check.select_rules = lambda *a: [_probe(wanted)]
        try:
            report = check_file(path, options, None, project)
            if report.error is not None:
                print(report.error)
        finally:
            file_check.select_rules = original
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
