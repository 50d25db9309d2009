#!/usr/bin/env python3
"""What the schema validators cannot see in deploy/: that the files agree with the code and with
each other. scripts/check-deploy runs it with the venv's Python (PyYAML comes with the checkers).

  check-deploy-consistency.py config-names     every MARQUEE_* name in deploy/ is one Marquee reads
  check-deploy-consistency.py config-docs      docs/configuration.md lists exactly the keys Marquee reads
  check-deploy-consistency.py compose          docker-compose.yml against marquee.env.example
  check-deploy-consistency.py kustomization    kustomization.yaml lists exactly the manifests
  check-deploy-consistency.py secrets          no secret value is committed under deploy/
  check-deploy-consistency.py dashboard [RULES_OUT]
                                               the dashboard's metrics are the ones /metrics
                                               exports; with RULES_OUT, its queries as a rules
                                               file for `promtool check rules`

Each prints what it checked and exits 1 with the problems listed.
"""

import json
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"

# The names GET /metrics exports (issue 10): README's Observability table, and string literals in
# Sources/ (the `dashboard` check finds each there).
METRICS = {
    "marquee_http_requests_total": "counter",
    "marquee_http_request_duration_seconds": "histogram",
    "marquee_apns_pushes_total": "counter",
    "marquee_apns_request_duration_seconds": "histogram",
    "marquee_apns_connections": "gauge",
    "marquee_apns_streams_in_flight": "gauge",
    "marquee_apns_connection_streams_in_flight": "histogram",
    "marquee_apns_connection_concurrency_limit": "histogram",
    "marquee_apns_batch_wait_seconds": "histogram",
    "marquee_job_tokens_total": "counter",
    "marquee_jobs_running": "gauge",
    "marquee_job_remaining_tokens": "gauge",
    "marquee_start_confirmations_total": "counter",
    "marquee_channels": "gauge",
    "marquee_channel_quota_ratio": "gauge",
    "marquee_events": "gauge",
    "marquee_event_funnel": "gauge",
    "marquee_broadcast_latency_seconds": "histogram",
}

problems = []


def problem(message):
    problems.append(message)


def finish(summary):
    if problems:
        for p in problems:
            print(f"   - {p}")
        sys.exit(1)
    print(f"   {summary}")


def deploy_files():
    """Tracked-looking text files under deploy/ (not the vendored schemas, not filled-in secrets)."""
    for path in sorted(DEPLOY.rglob("*")):
        if not path.is_file() or "schemas" in path.relative_to(DEPLOY).parts:
            continue
        if path.suffix == ".env":  # a filled-in copy: git ignores it
            continue
        yield path


# ---------------------------------------------------------------------------------------------
# config-names


def environment_name(key):
    """swift-configuration's EnvironmentKeyEncoder (1.4.0), behind prefixKeys(with: "marquee"):
    a boundary between a lower-case and an upper-case letter becomes "_", then each component is
    upper-cased, anything not a letter or digit becomes "_", and the components join with "_"."""
    components = ["marquee"] + key.split(".")
    encoded = []
    for component in components:
        spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", component)
        encoded.append(re.sub(r"[^A-Z0-9]", "_", spaced.upper()))
    return "_".join(encoded)


CONFIGURATION = ROOT / "Sources/MarqueeServer/Configuration"


def configuration_keys():
    source = "\n".join(path.read_text() for path in sorted(CONFIGURATION.glob("*.swift")))
    # Every dotted string literal in the folder's files is a key they read (reader.raw("http.host"), ...,
    # and customEndpointKeys), except the default file name marquee.sqlite.
    literals = set(re.findall(r'"([a-z][A-Za-z0-9]*(?:\.[a-z][A-Za-z0-9]*)+)"', source))
    return sorted(k for k in literals if not k.endswith(".sqlite"))


def config_docs():
    reference = ROOT / "docs/configuration.md"
    keys = configuration_keys()
    documented = {}
    for line in reference.read_text().splitlines():
        match = re.match(r"^\| `([^`]+)` \| `([^`]+)` \|", line)
        if match:
            documented[match.group(1)] = match.group(2)
    for key in keys:
        if key not in documented:
            problem(f"{key} is read by {CONFIGURATION.relative_to(ROOT)} but not in {reference.relative_to(ROOT)}")
        elif documented[key] != environment_name(key):
            problem(f"{key}: {reference.relative_to(ROOT)} names the variable {documented[key]}, Marquee reads {environment_name(key)}")
    for key in sorted(set(documented) - set(keys)):
        problem(f"{key} is in {reference.relative_to(ROOT)} but Marquee does not read it")
    finish(f"{len(keys)} configuration keys, each in {reference.relative_to(ROOT)} with its variable")


def config_names():
    configuration = CONFIGURATION
    keys = configuration_keys()
    known = {environment_name(k): k for k in keys}
    # Names the code reads from the environment by name (migrate: MARQUEE_DATABASE_URL, MARQUEE_SQL_DIR).
    for swift in (ROOT / "Sources").rglob("*.swift"):
        for name in re.findall(r'"(MARQUEE_[A-Z0-9_]+)"', swift.read_text()):
            known.setdefault(name, f"read by name in {swift.relative_to(ROOT)}")
    if len(keys) < 10:
        problem(f"found only {len(keys)} configuration keys in {configuration.relative_to(ROOT)}: has it moved?")
    used = {}
    for path in deploy_files():
        for name in re.findall(r"\bMARQUEE_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(errors="replace")):
            used.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    for name, files in sorted(used.items()):
        if name not in known:
            close = [k for k in known if k.startswith(name[: max(12, len(name) - 6)])]
            hint = f" (did you mean {', '.join(sorted(close))}?)" if close else ""
            problem(f"{name} in {', '.join(sorted(files))} is not a name Marquee reads{hint}")
    finish(f"{len(used)} MARQUEE_* names used in deploy/, all among the {len(known)} Marquee reads")


# ---------------------------------------------------------------------------------------------
# compose


def env_file_keys(path):
    keys = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^\s*#?\s*([A-Z][A-Z0-9_]*)=(.*)$", line)
        if match and not line.lstrip().startswith("#"):
            keys[match.group(1)] = match.group(2)
    return keys


def compose():
    path = DEPLOY / "docker-compose.yml"
    text = path.read_text()
    document = yaml.safe_load(text)  # resolves the x-marquee anchors and << merges
    services = document.get("services", {})
    for name, service in services.items():
        depends = service.get("depends_on", {})
        for target in depends if isinstance(depends, (list, dict)) else []:
            if target not in services:
                problem(f"service {name} depends on {target}, which is not a service")
        for volume in service.get("volumes", []):
            source = volume.split(":")[0] if isinstance(volume, str) else volume.get("source", "")
            if source and not source.startswith((".", "/", "~")) and source not in (document.get("volumes") or {}):
                problem(f"service {name} mounts volume {source}, which is not declared under volumes:")
    # Every ${VAR} is in the example env file, and the example has nothing the file does not use.
    interpolated = set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", text))
    example = env_file_keys(DEPLOY / "marquee.env.example")
    for name in sorted(interpolated - set(example)):
        problem(f"docker-compose.yml interpolates ${{{name}}}, which marquee.env.example does not list")
    for name in sorted(set(example) - interpolated):
        problem(f"marquee.env.example lists {name}, which docker-compose.yml does not use")
    # A missing secret must stop `docker compose` rather than start with an empty value.
    for match in re.finditer(r"\$\{([A-Za-z_][A-Za-z0-9_]*)([^}]*)\}", text):
        if not match.group(2).startswith(":?"):
            problem(f"${{{match.group(1)}{match.group(2)}}} has no :? guard: an unset value would start things empty")
    finish(f"{len(services)} services, depends_on and volumes resolve; {len(interpolated)} interpolated names match marquee.env.example, all required")


# ---------------------------------------------------------------------------------------------
# kustomization


def kustomization():
    folder = DEPLOY / "kubernetes"
    document = yaml.safe_load((folder / "kustomization.yaml").read_text())
    listed = document.get("resources", [])
    for resource in listed:
        if not (folder / resource).is_file():
            problem(f"kustomization.yaml lists {resource}, which does not exist")
    present = {p.name for p in folder.glob("*.yaml") if p.name != "kustomization.yaml"}
    for name in sorted(present - set(listed)):
        problem(f"{name} is not listed in kustomization.yaml")
    images = {i.get("name") for i in document.get("images", [])}
    for name in sorted(present):
        for doc in yaml.safe_load_all((folder / name).read_text()):
            for image in re.findall(r"'image': '([^']+)'", str(doc)):
                if image not in images:
                    problem(f"{name} uses image {image}, which kustomization.yaml's images: does not set")
    finish(f"kustomization.yaml lists exactly the {len(present)} manifests; every image is set by images:")


# ---------------------------------------------------------------------------------------------
# secrets


def secrets():
    checked = 0
    for path in deploy_files():
        text = path.read_text(errors="replace")
        checked += 1
        # A master key or any 32 bytes of base64 (44 characters ending in "=").
        for match in re.finditer(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{43}=(?![A-Za-z0-9+/=])", text):
            line = text.count("\n", 0, match.start()) + 1  # where, never what: this output goes to CI logs
            problem(f"{path.relative_to(ROOT)}:{line} holds what looks like a 32-byte key")
        # Passwords in URLs: only placeholders and interpolations.
        for match in re.finditer(r"postgres(?:ql)?://([^:@/\s]+):([^@\s]+)@", text):
            password = match.group(2)
            if not (password.startswith("${") or password in {"REPLACE-ME", "PASSWORD"}):
                problem(f"{path.relative_to(ROOT)} has a database URL with a password: {match.group(1)}:***@")
        # Example env files leave every secret empty.
        if path.name.endswith(".env.example"):
            for name, value in env_file_keys(path).items():
                if re.search(r"PASSWORD|KEYS?$|SECRET|DATABASE_URL", name) and value.strip():
                    problem(f"{path.relative_to(ROOT)} sets {name}: examples must leave secrets empty")
    secret = yaml.safe_load((DEPLOY / "kubernetes/secret.yaml").read_text())
    for name, value in (secret.get("stringData") or {}).items():
        if "REPLACE-ME" not in value:
            problem(f"kubernetes/secret.yaml: {name} is not a REPLACE-ME placeholder")
    if secret.get("data"):
        problem("kubernetes/secret.yaml has data: (base64 values); use placeholder stringData only")
    finish(f"{checked} files: no keys, no database passwords; the examples and the Secret hold placeholders only")


# ---------------------------------------------------------------------------------------------
# dashboard


def dashboard(rules_out=None):
    path = DEPLOY / "grafana/marquee-dashboard.json"
    document = json.loads(path.read_text())
    queries = []
    ids = []

    def walk(panels):
        for panel in panels:
            ids.append(panel.get("id"))
            if panel.get("type") != "row" and not panel.get("datasource"):
                problem(f"panel {panel.get('title')!r} has no datasource")
            for target in panel.get("targets", []):
                queries.append((panel.get("title"), target.get("expr", "")))
            walk(panel.get("panels", []))

    walk(document.get("panels", []))
    if len(ids) != len(set(ids)):
        problem("panel ids are not unique")
    used = set()
    for title, expr in queries:
        for name in re.findall(r"\bmarquee_[a-z0-9_]+", expr):
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            if base in METRICS and METRICS[base] == "histogram" and base != name:
                used.add(base)
            elif name in METRICS and METRICS[name] != "histogram":
                used.add(name)
            else:
                problem(f"panel {title!r} queries {name}, which /metrics does not export")
    for name in sorted(set(METRICS) - used):
        problem(f"no panel shows {name}")
    sources = "\n".join(p.read_text() for p in (ROOT / "Sources").rglob("*.swift"))
    readme = (ROOT / "README.md").read_text()
    for name in sorted(METRICS):
        if f'"{name}"' not in sources:
            problem(f"{name} is not a metric name in Sources/: the code exports something else")
        if f"`{name}`" not in readme:
            problem(f"{name} is not in README.md's Observability table")
    if rules_out:
        # Grafana's variables replaced by values PromQL accepts, so that promtool parses each query.
        values = {"$__rate_interval": "1m", "$__range": "3h", "$instance": ".*", "$app": ".*"}
        lines = ["groups:", "  - name: marquee-dashboard", "    rules:"]
        for index, (title, expr) in enumerate(queries):
            for variable, value in values.items():
                expr = expr.replace(variable, value)
            if "$" in expr:
                problem(f"panel {title!r} uses a variable this check does not know: {expr}")
            lines += [f"      - record: dashboard:query_{index}", f"        expr: {json.dumps(expr)}"]
        pathlib.Path(rules_out).write_text("\n".join(lines) + "\n")
    finish(f"{len(ids)} panels, {len(queries)} queries over all {len(METRICS)} exported metrics and no others; each named in Sources/ and README.md")


COMMANDS = {
    "config-names": config_names,
    "config-docs": config_docs,
    "compose": compose,
    "kustomization": kustomization,
    "secrets": secrets,
    "dashboard": dashboard,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
