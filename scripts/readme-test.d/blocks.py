"""README.md's fenced shell blocks as one bash script, in order, with scripts/readme-test's
documented substitutions (its header lists them). Usage:

    blocks.py README.md OUT.sh --binary PATH --url http://127.0.0.1:N --key mq_... --inspection URL --database-url URL
"""

import argparse
import re
import shlex

parser = argparse.ArgumentParser()
parser.add_argument("readme")
parser.add_argument("out")
for name in ("--binary", "--url", "--key", "--inspection", "--database-url"):
    parser.add_argument(name, required=True)
arguments = parser.parse_args()

blocks, current, start = [], None, 0
for number, line in enumerate(open(arguments.readme).read().split("\n"), 1):
    if current is None and re.match(r"^```(bash|sh|shell)\s*$", line):
        current, start = [], number + 1
    elif current is not None and line.startswith("```"):
        blocks.append((start, current))
        current = None
    elif current is not None:
        current.append(line)

marquee = shlex.quote(arguments.binary)
substitutions = [
    (r"^swift run marquee serve\b.*$", ": # swift run marquee serve: the server readme-test started"),
    (r"^scripts/test\b.*$", ": # scripts/test: what runs this test"),
    (r"^swift build && alias marquee=\S+", "alias marquee=" + marquee),
    (r"\bswift run marquee demo\b", marquee + " demo --devices 60"),
    (r"\bswift run marquee\b", marquee),
    (r"INSPECT=http://127\.0\.0\.1:\.\.\.", "INSPECT=" + shlex.quote(arguments.inspection)),
    (r"http://127\.0\.0\.1:8080", arguments.url),
    (r"\bmq_\.\.\.", arguments.key),
    (r"postgres://marquee:secret@db:5432/marquee", shlex.quote(arguments.database_url)),
]
script = [
    "set -euo pipefail",
    "shopt -s expand_aliases",
    # An HTTP error answer is an error, not a body for jq to print as nulls.
    'curl() { command curl --fail-with-body "$@"; }',
    # The emulator the emulator's block starts in the background.
    "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
]
for start, body in blocks:
    script.append(f"echo '== README.md, the block at line {start}' >&2")
    for line in body:
        for pattern, replacement in substitutions:
            line = re.sub(pattern, lambda match: replacement, line)
        script.append(line)
open(arguments.out, "w").write("\n".join(script) + "\n")
print(f"readme-test: {len(blocks)} blocks of README.md")
