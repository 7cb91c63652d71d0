"""The verifier's command-line options (no torch, no heavy imports: the CLI builds its parser here)."""

from __future__ import annotations

import argparse
from typing import List

MODES = ("gpu", "predict")


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "runtime verification (imports torch, runs your code in a child process)",
        "Each verdict says what its inputs rest on: 'observed' (values recorded from a real run: "
        "--inputs FILE, written by `torchsync-lint trace --record-inputs FILE` or the guard's record mode), "
        "'inferred' (static inference with the whole project: annotations, device provenance, defaults every "
        "call leaves out) or 'guessed' (synthesised without a type, or a default kept where callers pass what "
        "inference cannot name). A verdict on guessed inputs is counted as neither confirmed nor refuted. "
        "--verify-entry runs a whole real step instead.")
    g.add_argument("--verify", nargs=0, action=_VerifyFlag, default=None, dest="verify",
                   help="run each finding's statement on a CUDA device and report confirmed/refuted/"
                        "inconclusive with the host stall; --verify=predict: a CPU-only FakeTensor prediction")
    g.add_argument("--verify-mode", choices=MODES, default=None, help=argparse.SUPPRESS)
    g.add_argument("--verify-entry", action="append", default=[], metavar="MODULE:FUNC",
                   help="run real code instead of snippets: FUNC returns (callable, args[, kwargs]); repeatable")
    g.add_argument("--inputs", metavar="FILE", default=None, dest="verify_inputs",
                   help="replay each finding with the arguments recorded on the first entry of its function in a "
                        "real run (implies --verify; inputs become 'observed')")
    g.add_argument("--verify-fixes", action="store_true",
                   help="also run each rule's sync-free rewrite on the same inputs and compare the values")
    g.add_argument("--verify-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="time limit per verified finding or entry (default: 60)")


class _VerifyFlag(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, "gpu")


def normalize_argv(argv: List[str]) -> List[str]:
    """``--verify=predict`` -> ``--verify --verify-mode predict`` (``--verify PATH`` must keep PATH)."""
    out: List[str] = []
    for a in argv:
        if a.startswith("--verify="):
            out += ["--verify", "--verify-mode", a.split("=", 1)[1]]
        else:
            out.append(a)
    return out


def wanted(args) -> bool:
    return bool(getattr(args, "verify", None) or getattr(args, "verify_entry", None) or
                getattr(args, "verify_inputs", None) or
                getattr(args, "verify_mode", None) or getattr(args, "verify_fixes", False))


def mode_of(args) -> str:
    return getattr(args, "verify_mode", None) or "gpu"
