"""Compare a regenerated artefact with the committed one: text exactly, numbers within REL_TOL.

The exact engine's doubles agree across machines only to about 1e-14 relative: numpy and scipy
pick SIMD kernels by CPU (AVX2 vs AVX-512, x86-64 vs arm64), which sum in different orders.
So every committed artefact is compared token by token: the text between numbers must match
byte for byte, a whole number (a count, a k_min, a seed) must match exactly, and a number
written with a decimal point or an exponent must agree to ``REL_TOL`` relative (or
``ABS_TOL`` absolute, for values that are zero on one machine and 1e-300 on another). A
count, a word, a gate or a decision that changes still fails the comparison.
"""

from __future__ import annotations

import math
import re

REL_TOL = 1e-9
ABS_TOL = 1e-15
# a number not glued to a word: "k_min" or "0x1f" are text, "-0.5", "1e-13" and "12" are numbers
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _tokens(text: str) -> list[str]:
    parts: list[str] = []
    last = 0
    for match in _NUMBER.finditer(text):
        parts.extend((text[last : match.start()], match.group()))
        last = match.end()
    parts.append(text[last:])
    return parts


def _is_whole(token: str) -> bool:
    return not any(c in token for c in ".eE")


def differences(actual: str, expected: str, *, limit: int = 5) -> list[str]:
    """The first `limit` differences between two texts under the rules above ([] if none)."""
    got, want = _tokens(actual), _tokens(expected)
    if len(got) != len(want):
        return [f"{len(got) // 2} numbers against {len(want) // 2}: the text differs"]
    found = []
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        if a == b:
            continue
        is_number = i % 2 == 1
        if (
            is_number
            and not _is_whole(a)
            and not _is_whole(b)
            and math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=ABS_TOL)
        ):
            continue
        context = "".join(want[max(0, i - 3) : i])[-60:]
        found.append(f"after {context!r}: got {a!r}, committed {b!r}")
        if len(found) == limit:
            break
    return found


def assert_same(actual: str, expected: str, name: str = "") -> None:
    """Assert that `actual` regenerates `expected` (see the module docstring)."""
    found = differences(actual, expected)
    assert not found, f"{name} differs: " + "; ".join(found)
