"""Privacy guard figures: what hiding secrets and masking personal data adds to each step, on page texts
of the size the model reads (a ~20 KB and a ~200 KB state text with e-mails, phones, card numbers, IBANs
and many long digit runs that are not cards), with masking off (secrets only), the default (cards) and
everything on plus two user patterns.

    .venv/bin/python bench/bench_privacy.py [--runs 21]

Prints the median (min–max) milliseconds of one `conceal` call; asserts nothing. Target: < 5 ms for
20 KB with everything on (a step's page read takes 30-400 ms). Then hostile pages of 128 KB, the secrets only:
one of a single character over and over (what a pattern with an unbounded repeat takes quadratic time on: 32,000
zeros took 1.1 s once) and one showing a stored secret in base64 20,000 times; both should stay linear. Last, a
user pattern that backtracks without end (/(?:a|a)*$/) on 40 "a"s and a "!": it is stopped at
masking.PATTERN_SECONDS (the time printed is until PatternTooSlow). And the page text's hiding of secret values across
frames with a page's 2,000 password fields against a frame's 20,000 strings (23 s when each value was looked for in
each string)."""

from __future__ import annotations

import argparse
import base64
import statistics
import time

from tabpilot.browser.dom.snapshot import secret_hider
from tabpilot.privacy.guard import PrivacyGuard
from tabpilot.privacy.masking import MaskRules, PatternTooSlow
from tabpilot.privacy.secrets import Secret

LINE = ("[{i}]<a href=/orders/{i}>Order 2026-11-{d:02d} #10{i:05d}</a> ada{i}@example.org +49 30 {i:07d} "
        "4242 4242 4242 4242 DE89 3704 0044 0532 0130 00 ref 1234 5678 9012 {i:04d} qty 3 · €{i}.99\n")
SECRETS = [Secret(f"PW_{n}", f"site{n}.test", f"password-value-{n}") for n in range(10)]
RULES = {
    "secrets only": MaskRules(cards=False),
    "default (cards)": MaskRules(),
    "everything + 2 patterns": MaskRules(emails=True, phones=True, cards=True, ibans=True,
                                         patterns=("/ACME-\\d{4}/", "Project Falcon")),
}


def page(size: int) -> str:
    lines, total, i = [], 0, 0
    while total < size:
        line = LINE.format(i=i, d=i % 28 + 1)
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    for label, size in (("20 KB", 20_000), ("200 KB", 200_000)):
        text = page(size)
        for name, rules in RULES.items():
            timings = []
            for _ in range(args.runs):
                guard = PrivacyGuard(SECRETS, rules)  # a fresh task each run: every value is new
                started = time.perf_counter()
                guard.conceal(text, "https://shop.example.com/orders")
                timings.append((time.perf_counter() - started) * 1000)
            print(f"{label:>7} · {name:<24} {statistics.median(timings):8.2f} ms "
                  f"({min(timings):.2f}–{max(timings):.2f})")
    secret = SECRETS[0].value
    hostile = {"128 KB of '0'": "0" * 128_000, "128 KB of '%'": "%" * 128_000,
               "the secret in base64 ×20k": f" x {base64.b64encode(secret.encode()).decode()}" * 20_000}
    for name, text in hostile.items():
        timings = []
        for _ in range(max(3, args.runs // 4)):
            guard = PrivacyGuard(SECRETS, RULES["secrets only"])
            started = time.perf_counter()
            guard.conceal(text, "https://shop.example.com/orders")
            timings.append((time.perf_counter() - started) * 1000)
        print(f"hostile · {name:<26} {statistics.median(timings):8.2f} ms ({min(timings):.2f}–{max(timings):.2f})")
    timings = []
    for _ in range(3):
        guard = PrivacyGuard(rules=MaskRules(cards=False, patterns=("/(?:a|a)*$/",)))
        started = time.perf_counter()
        try:
            guard.conceal("a" * 40 + "!")
        except PatternTooSlow:
            pass
        timings.append((time.perf_counter() - started) * 1000)
    print(f"hostile · {'/(?:a|a)*$/ on 40 a':<26} {statistics.median(timings):8.2f} ms "
          f"({min(timings):.2f}–{max(timings):.2f})")
    # A page of 2,000 password fields whose values the host hides in a frame's 20,000 strings (the page text's
    # hiding across frames, snapshot.secret_hider): each value against each string took 23 s on the event loop.
    values = sorted({f"field-{n:04d}-value-of-the-page-{n * 7919 % 10007:05d}" for n in range(2000)}, key=len,
                    reverse=True)
    strings = [f"row {n}: status ok, {values[n % 2000][:20]} and more words of the frame" for n in range(20_000)]
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        hide = secret_hider(values)
        for text in strings:
            hide(text)
        timings.append((time.perf_counter() - started) * 1000)
    print(f"hostile · {'2,000 values × 20k strings':<26} {statistics.median(timings):8.2f} ms "
          f"({min(timings):.2f}–{max(timings):.2f})")


if __name__ == "__main__":
    main()
