"""How the call graph follows a callee's name (``CallGraph.resolve``): through class bases and
import tables, up to a depth limit; a package that re-exports its own module stops at once
instead of asking the same name again at every depth. Answers are those of the plain recursion
(kept here as the reference) on graphs with self re-exports, alias cycles and base chains."""

import itertools
import random

from torchsync_lint.inference import callgraph
from torchsync_lint.inference.callgraph import CallGraph, FileSummary


def _reference(graph: CallGraph, key: str, depth: int = 0):
    """The recursion as it was before the early stop (no memo, every depth followed)."""
    if key in graph.functions:
        return key
    if depth > 8:
        return None
    if key.startswith("@attr:"):
        _, cls_key, attr, meth = key.split(":", 3)
        for c in [cls_key] + graph.class_bases.get(cls_key, []):
            target = graph.attr_classes.get(c, {}).get(attr)
            if target is not None:
                return _reference(graph, f"{target}.{meth}", depth + 1)
        return None
    cls_key, _, meth = key.rpartition(".")
    for base in graph.class_bases.get(cls_key, []):
        r = _reference(graph, f"{base}.{meth}", depth + 1)
        if r is not None:
            return r
    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        table = graph.aliases.get(".".join(parts[:i]))
        if table and parts[i] in table:
            return _reference(graph, ".".join([table[parts[i]]] + parts[i + 1:]), depth + 1)
    return None


def _datasets_graph() -> CallGraph:
    """torchvision's shape: a package's table names its own submodule (torchvision's ``__init__``:
    ``from torchvision import datasets``), a dataset calls ``self.transform(...)``, which no class
    defines."""
    return CallGraph([
        FileSummary("pkg.datasets", aliases={"vision": "pkg.datasets.vision", "VisionDataset":
                                             "pkg.datasets.vision.VisionDataset"}),
        FileSummary("pkg.datasets.vision", functions={"pkg.datasets.vision.VisionDataset.__init__": set()},
                    class_bases={"pkg.datasets.vision.VisionDataset": ["torch.utils.data.Dataset"]},
                    aliases={"torch": "torch"}),
        FileSummary("pkg.datasets.mnist", functions={"pkg.datasets.mnist.MNIST.__getitem__": {
            "pkg.datasets.mnist.MNIST.transform"}},
            class_bases={"pkg.datasets.mnist.MNIST": ["pkg.datasets.vision.VisionDataset"]},
            aliases={"VisionDataset": "pkg.datasets.vision.VisionDataset"}),
    ])


def test_a_package_re_exporting_its_own_module_is_not_followed_to_the_depth_limit(monkeypatch):
    graph = _datasets_graph()
    asked = []
    inner = CallGraph._resolve

    def counting(self, key, depth):
        asked.append((key, depth))
        return inner(self, key, depth)

    monkeypatch.setattr(callgraph.CallGraph, "_resolve", counting)
    key = "pkg.datasets.mnist.MNIST.transform"
    assert graph.resolve(key) is None
    assert _reference(graph, key) is None
    # MNIST -> VisionDataset (its base) -> torch's Dataset (nothing), then the package's table
    # leads back to VisionDataset's own name: answered there, not 8 more times
    assert len(asked) <= 4, asked
    assert max(d for _k, d in asked) <= 2


def test_a_method_found_in_a_base_still_resolves_through_a_self_re_export():
    graph = _datasets_graph()
    assert graph.resolve("pkg.datasets.mnist.MNIST.__init__") == "pkg.datasets.vision.VisionDataset.__init__"
    assert graph.resolve("pkg.datasets.VisionDataset.__init__") == "pkg.datasets.vision.VisionDataset.__init__"


def _random_graph(rng: random.Random) -> CallGraph:
    modules = ["p", "p.a", "p.b", "p.c", "p.a.x"]
    names = ["A", "B", "C", "f", "g", "a", "b", "x"]
    summaries = []
    for m in modules:
        functions, bases, aliases, attrs = {}, {}, {}, {}
        for n in rng.sample(names, 3):
            if rng.random() < 0.5:
                functions[f"{m}.{n}"] = set()
        for c in rng.sample(["A", "B", "C"], 2):
            functions[f"{m}.{c}.{rng.choice(['f', 'g'])}"] = set()
            bases[f"{m}.{c}"] = [f"{rng.choice(modules)}.{rng.choice(['A', 'B', 'C'])}"
                                 for _ in range(rng.randint(0, 2))]
            if rng.random() < 0.3:
                attrs[f"{m}.{c}"] = {"net": f"{rng.choice(modules)}.{rng.choice(['A', 'B', 'C'])}"}
        for n in rng.sample(names, 4):
            target = rng.choice(modules) + "." + rng.choice(names)
            aliases[n] = rng.choice([target, f"{m}.{n}", rng.choice(modules)])  # self, cycles, modules
        summaries.append(FileSummary(m, functions=functions, class_bases=bases, aliases=aliases,
                                     attr_classes=attrs))
    return CallGraph(summaries)


def test_answers_equal_the_plain_recursion_on_random_graphs():
    rng = random.Random(18)
    keys = [".".join(p) for n in (2, 3, 4)
            for p in itertools.product(["p", "a", "b", "c", "x", "A", "B", "C", "f", "g"], repeat=n)
            if p[0] == "p"]
    checked = found = 0
    for _ in range(60):
        graph = _random_graph(rng)
        for key in rng.sample(keys, 300) + [f"@attr:p.a.A:net:{m}" for m in ("f", "g")]:
            want = _reference(graph, key)
            assert graph.resolve(key) == want, key
            assert graph.resolve(key, 3) == _reference(graph, key, 3), key
            checked += 1
            found += want is not None
    assert checked > 10000 and found > 500
