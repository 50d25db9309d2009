"""The world a Marquee suite builds on loopback, shared by scripts/chaos and Benchmarks/run-soak.sh.

A `marquee emulator` process (the APNs the servers use, over TLS with its own CA), a throwaway
PostgreSQL cluster with durable settings run as the postgres user, `marquee serve` replicas with the
emulator as a custom APNs, HTTP on loopback, and a cleanup list that stops everything whatever the
outcome.  Python 3 standard library only.  `configure(label)` names the caller in log lines, replica
logs, the PostgreSQL user's password and the master key's name.
"""
import base64
import ctypes
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IOS_VERSIONS = ["17.2", "17.4", "18.0"]
LABEL = "marquee"


def configure(label):
    """Names the caller (`chaos`, `soak`) in what it logs and writes."""
    global LABEL
    LABEL = label


class SuiteError(Exception):
    """The suite could not run (a process did not start, the API refused the setup): exit 2."""


def log(message):
    print(f"{LABEL} {time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def count(n):
    return f"{n:,}"


def free_port():
    """scripts/free-port: a port below the kernel's ephemeral range, which a replica or PostgreSQL
    can start again on after a crash without an outgoing connection having taken it meanwhile."""
    result = subprocess.run([os.path.join(ROOT, "scripts", "free-port")], capture_output=True, text=True)
    if result.returncode != 0:
        raise SuiteError(result.stderr.strip() or "scripts/free-port failed")
    return int(result.stdout)


def die_with_parent():
    """Runs in each child before exec: it gets SIGKILL should this script die without cleaning up."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


# ---------------------------------------------------------------------------------------------
# Everything started, stopped whatever happens


class Cleanup:
    def __init__(self):
        self.actions = []  # (description, callable), undone last first

    def add(self, description, action):
        self.actions.append((description, action))
        return action

    def run(self):
        while self.actions:
            description, action = self.actions.pop()
            for attempt in (1, 2):  # an action a second Ctrl-C or SIGTERM cut short runs again, once
                try:
                    action()
                    break
                except BaseException as error:  # keep cleaning up whatever happens
                    log(f"cleanup: {description}: {error!r}" + (", once more" if attempt == 1 else ""))


def stop_process(process, timeout=15):
    """SIGTERM, then SIGKILL after `timeout` seconds; the process by its own id only."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# ---------------------------------------------------------------------------------------------
# HTTP on loopback


def request(base, method, path, key=None, body=None, headers=None, timeout=60):
    """One request; answers (status, parsed JSON or text or None).  Connection errors raise OSError."""
    url = urllib.parse.urlparse(base)
    assert url.hostname in ("127.0.0.1", "localhost", "::1"), f"not loopback: {base}"
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        all_headers = dict(headers or {})
        if key:
            all_headers["Authorization"] = f"Bearer {key}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        connection.request(method, path, data, all_headers)
        response = connection.getresponse()
        raw = response.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return response.status, parsed
    finally:
        connection.close()


def expect(status_and_body, status, what):
    status_got, body = status_and_body
    if status_got not in ((status,) if isinstance(status, int) else status):
        raise SuiteError(f"{what}: HTTP {status_got} {json.dumps(body)[:600] if not isinstance(body, str) else body[:600]}")
    return body


# ---------------------------------------------------------------------------------------------
# PostgreSQL: a throwaway cluster with durable settings


class Postgres:
    def __init__(self, work, cleanup):
        self.cleanup = cleanup
        if shutil.which("pg_config") is None or not os.access(os.path.join(self._bindir(), "initdb"), os.X_OK):
            raise SuiteError("PostgreSQL is not installed (scripts/with-postgres installs Debian's postgresql-15)")
        self.bin = self._bindir()
        self.dir = os.path.join(work, "postgres")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o755)
        self.as_pg = []
        if os.geteuid() == 0:
            # initdb refuses to run as root: the cluster belongs to the postgres user.
            shutil.chown(self.dir, "postgres", "postgres")
            self.as_pg = ["runuser", "-u", "postgres", "--"]
        self._run(["initdb", "-D", self.data, "-U", "marquee", "--auth-local=trust", "--auth-host=trust", "--locale=C", "-E", "UTF8"])
        self.port = None
        self.running = False
        self.extra_options = ""
        cleanup.add("PostgreSQL", self.stop)

    @staticmethod
    def _bindir():
        return subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()

    def _run(self, arguments, check=True):
        result = subprocess.run(self.as_pg + [os.path.join(self.bin, arguments[0])] + arguments[1:], capture_output=True, text=True)
        if check and result.returncode != 0:
            raise SuiteError(f"{arguments[0]} failed: {result.stdout[-800:]}{result.stderr[-800:]}")
        return result

    def start(self):
        for _ in range(20):
            port = self.port or free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={self.dir} "
                "-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=200"
            ) + self.extra_options
            result = self._run(["pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "120", "-o", options, "start"], check=False)
            if result.returncode == 0:
                self.port = port
                self.running = True
                return
            if self.port:  # a restart keeps its port: the replicas know it
                break
        raise SuiteError(f"PostgreSQL did not start: {self.tail()}")

    def stop_immediately(self):
        """The crash: no checkpoint, clients cut off; the next start recovers from the WAL."""
        self._run(["pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"])
        self.running = False

    def stop(self):
        if self.running:
            self._run(["pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "30", "stop"], check=False)
            self.running = False

    def create_database(self, name):
        result = subprocess.run(
            [os.path.join(self.bin, "psql"), "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "marquee", "-d", "postgres",
             "-c", f"CREATE DATABASE {name}"],
            capture_output=True, text=True,
        )
        if result.returncode != 0:
            raise SuiteError(f"CREATE DATABASE failed: {result.stderr}")

    def query(self, database, sql):
        """Rows of one statement through psql, each a list of strings (tab-separated, unaligned)."""
        result = subprocess.run(
            [os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-h", "127.0.0.1", "-p", str(self.port), "-U", "marquee",
             "-d", database, "-c", sql],
            capture_output=True, text=True,
        )
        if result.returncode != 0:
            raise SuiteError(f"psql failed: {result.stderr.strip()[:400]}")
        return [line.split("\t") for line in result.stdout.splitlines() if line]

    def url(self, database):
        # Trust authentication on loopback: the password is not checked.
        return f"postgres://marquee:{LABEL}@127.0.0.1:{self.port}/{database}?sslmode=disable"

    def tail(self, lines=20):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


# ---------------------------------------------------------------------------------------------
# The APNs emulator, a process of its own


class Emulator:
    """`marquee emulator` with one demo app (bundle ID, team and key ID), unlimited push-to-start
    budget and one push kept per token or channel; its URLs, CA and key read from its state file."""

    def __init__(self, binary, work, cleanup, faults, log_level="info", bundle_id="com.example.marquee", team_id="EMUTEAM001",
                 key_id="EMUKEY0001", attributes_type="MatchAttributes", extra=()):
        self.bundle_id = bundle_id
        self.attributes_type = attributes_type
        self.dir = os.path.join(work, "emulator")
        self.log_path = os.path.join(work, "emulator.log")
        arguments = [
            binary, "emulator", "--state-dir", self.dir, "--bundle-id", bundle_id, "--team-id", team_id, "--key-id", key_id,
            "--history", "1", "--push-to-start-budget", "0", "--log-level", "debug" if log_level in ("debug", "trace") else "warning",
        ]
        for fault in faults:
            arguments += ["--fault", json.dumps(fault)]
        arguments += list(extra)
        self.log_file = open(self.log_path, "ab")
        self.process = subprocess.Popen(arguments, stdout=self.log_file, stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        cleanup.add("emulator", lambda: (stop_process(self.process), self.log_file.close()))
        state_path = os.path.join(self.dir, "emulator.json")
        deadline = time.monotonic() + 120
        while not os.path.exists(state_path):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SuiteError(f"marquee emulator did not start: {read_tail(self.log_path)}")
            time.sleep(0.1)
        time.sleep(0.2)  # written atomically; read it once complete
        with open(state_path) as f:
            state = json.load(f)
        sandbox = state["environments"]["sandbox"]
        production = state["environments"]["production"]
        self.inspection = state["inspectionURL"]
        self.push = {"sandbox": sandbox["push"], "production": production["push"]}
        self.management = {"sandbox": sandbox["channelManagement"], "production": production["channelManagement"]}
        self.ca = state["caCertificatePath"]
        with open(state["demoKey"]["p8Path"]) as f:
            self.p8 = f.read()

    def register_devices(self, n):
        """N devices, iOS 17.2, 17.4 and 18.0 in turn, in batches of at most 10,000."""
        devices = []
        per_version = [n // 3 + (1 if i < n % 3 else 0) for i in range(3)]
        for version, wanted in zip(IOS_VERSIONS, per_version):
            while wanted > 0:
                batch = min(wanted, 10_000)
                body = {"bundleID": self.bundle_id, "iOSVersion": version, "pushToStartAttributesTypes": [self.attributes_type], "count": batch}
                devices += expect(request(self.inspection, "POST", "/v1/sandbox/devices/batch", body=body, timeout=300), 200, "register devices")
                wanted -= batch
        return devices

    def connect_app(self, base, app_key, event_key_attribute="eventKey"):
        """The emulator plays the demo app against Marquee at `base` (MarqueeKit's logic on every
        device registered from now on): it reports what each device shows and answers background
        pushes, with the shares given as `extra` options."""
        body = {"baseURL": base, "appKey": app_key, "attributesType": self.attributes_type, "eventKeyAttribute": event_key_attribute}
        expect(request(self.inspection, "PUT", f"/v1/apps/{self.bundle_id}/marquee", body=body), 200, "connect the app model")

    def start_counts(self):
        return expect(request(self.inspection, "GET", "/v1/sandbox/start-counts", timeout=300), 200, "start counts")

    def summary(self):
        return expect(request(self.inspection, "GET", "/v1/summary"), 200, "emulator summary")


def read_tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------
# marquee serve


class Replica:
    def __init__(self, name, binary, work, environment, cleanup):
        self.name = name
        self.binary = binary
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.data_dir = os.path.join(work, f"replica-{name}")
        self.log_path = os.path.join(work, f"replica-{name}.log")
        self.environment = environment
        self.process = None
        self.starts = 0
        cleanup.add(f"replica {name}", self.stop)

    def start(self, timeout=180):
        self.starts += 1
        with open(self.log_path, "ab") as f:
            f.write(f"--- {LABEL}: start {self.starts} of replica {self.name} at {time.strftime('%H:%M:%S')}\n".encode())
            self.process = subprocess.Popen(
                [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data-dir", self.data_dir,
                 "--sql-dir", os.path.join(ROOT, "sql")],
                stdout=f, stderr=subprocess.STDOUT, env=self.environment, preexec_fn=die_with_parent,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SuiteError(f"replica {self.name} exited with {self.process.returncode}: {read_tail(self.log_path)}")
            try:
                if request(self.base, "GET", "/health/ready", timeout=5)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SuiteError(f"replica {self.name} not ready after {timeout} s: {read_tail(self.log_path)}")

    def kill(self):
        """The crash: SIGKILL, nothing flushed, no lease handed back."""
        if self.died() is None:
            self.process.kill()
            self.process.wait()

    def stop(self):
        if self.process is not None:
            stop_process(self.process, timeout=45)

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def died(self):
        """How the replica's current process ended on its own (not by `kill`), or None while it runs:
        a replica that stops by itself mid-run (a crash, a trap) is a failure of its own, and the job
        it leaves behind would otherwise look merely stalled."""
        if self.process is None or self.process.poll() is None:
            return None
        code = self.process.returncode
        how = f"signal {-code}" if code < 0 else f"exit {code}"
        tail = [line for line in read_tail(self.log_path, 200).splitlines() if not line.startswith("{")]
        return f"replica {self.name} stopped by itself ({how}) during start {self.starts}: " + " | ".join(tail[-6:])[-600:]

    def deployment_key(self):
        with open(self.log_path, errors="replace") as f:
            match = re.search(r"mq_[A-Za-z0-9_\-]+", f.read())
        if not match:
            raise SuiteError(f"replica {self.name} printed no deployment key")
        return match.group(0)

    def warnings(self):
        """Warnings and errors the replica logged (JSON lines), by message, most frequent first."""
        counts = {}
        try:
            with open(self.log_path, errors="replace") as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(entry, dict):
                        continue
                    level = str(entry.get("level", entry.get("log.level", ""))).lower()
                    if level not in ("warning", "error", "critical"):
                        continue
                    message = str(entry.get("message", entry.get("msg", "")))
                    detail = entry.get("error") or entry.get("error.message") or entry.get("reason") or ""
                    text = f"{level}: {message}" + (f" ({str(detail)[:160]})" if detail else "")
                    counts[text] = counts.get(text, 0) + 1
        except OSError:
            pass
        return sorted(counts.items(), key=lambda item: -item[1])


def serve_environment(emulator, policy, database_url=None, log_level="info"):
    """The environment of `marquee serve`: this process's own minus any MARQUEE_* (a developer's
    settings must not leak in), plus the emulator as a custom APNs and the suite's settings."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MARQUEE_") and not k.startswith("POSTGRES_")}
    environment.update({
        "MARQUEE_APNS_TARGET": "custom",
        "MARQUEE_APNS_SANDBOX_PUSH_URL": emulator.push["sandbox"],
        "MARQUEE_APNS_SANDBOX_MANAGEMENT_URL": emulator.management["sandbox"],
        "MARQUEE_APNS_PRODUCTION_PUSH_URL": emulator.push["production"],
        "MARQUEE_APNS_PRODUCTION_MANAGEMENT_URL": emulator.management["production"],
        "MARQUEE_APNS_CA_FILE": emulator.ca,
        "MARQUEE_LOG_FORMAT": "json",
        # debug shows each APNs connection's GOAWAY and close, with what it left unprocessed or uncertain
        "MARQUEE_LOG_LEVEL": log_level,
        # A crashed replica's part is taken over after its lease: 10 s keeps the run short.
        "MARQUEE_JOBS_LEASE_MILLISECONDS": "10000",
        "MARQUEE_JOBS_POLL_MILLISECONDS": "1000",
        # ServerConfiguration maps jobs.uncertainStarts to MARQUEE_JOBS_UNCERTAIN_STARTS.
        "MARQUEE_JOBS_UNCERTAIN_STARTS": policy,
    })
    if database_url:
        environment["MARQUEE_DATABASE_URL"] = database_url
        environment["MARQUEE_DATABASE_MAX_CONNECTIONS"] = "8"
        environment["MARQUEE_SECRETS_MASTER_KEYS"] = f"{LABEL}:" + base64.b64encode(os.urandom(32)).decode()
    return environment
