"""The deployment files in deploy/ (docs/production.md): what can be checked without systemd.

- Every variable an env file names is one the code really reads (settings.py and the modules that
  read the environment, found in their source; gunicorn's WEB_CONCURRENCY in gunicorn's), and the
  variables every host must share have the same value in every file.
- Every systemd unit parses (systemd-analyze verify where it is installed), runs programs the guide
  installs, with options those programs accept (gunicorn's own parser and --check-config, Celery's
  click commands, Django's command parsers), as the yardstick user, in the clone, with its role's
  env file, restarted, hardened, and stopped gracefully.
- The nginx site passes `nginx -t` (with certificates made here), and agrees with web.env and the
  web unit: the X-Accel-Redirect location, the folders, the upload limit, the proxy header, the
  upstream, the timeouts, /metrics kept to the host.
- web.env passes `manage.py check --deploy` with nothing to report.
- deploy/backup.sh dumps the test PostgreSQL database into a file pg_restore reads, copies the
  folders and keeps the newest backups (and copies an embedded SQLite database).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import re
import secrets
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
ENV_FILES = sorted((DEPLOY / "env").glob("*.env"))
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
SITE = DEPLOY / "nginx" / "yardstick.conf"
#: Where the guide installs the code (docs/production.md) and the units expect it.
INSTALL = "/srv/yardstick"
VENV_BIN = f"{INSTALL}/.venv/bin"
#: Read by a program the units start rather than by Yardstick's code: the name, and the library
#: file that reads it (checked below to still mention it).
LIBRARY_VARIABLES = {
    "WEB_CONCURRENCY": ("gunicorn", "config.py"),
    "PROMETHEUS_MULTIPROC_DIR": ("prometheus_client", "multiprocess.py"),
    "MPLCONFIGDIR": ("matplotlib", "__init__.py"),
}
#: Same value on every host that names them: one database, broker, cache, key and shared folders.
SHARED = (
    "DJANGO_SECRET_KEY",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
    "YARDSTICK_S3_BUCKET",
    "YARDSTICK_S3_ENDPOINT_URL",
    "YARDSTICK_S3_REGION",
    "YARDSTICK_S3_ACCESS_KEY_ID",
    "YARDSTICK_S3_SECRET_ACCESS_KEY",
    "YARDSTICK_WORKERS_ELSEWHERE",
    "MEDIA_ROOT",
    "YARDSTICK_UPLOADS_ROOT",
    "YARDSTICK_CHECKPOINT_DIR",
    "YARDSTICK_MODELS_DIR",
    "YARDSTICK_JOB_HEARTBEAT_S",
    "YARDSTICK_JOB_LOST_AFTER_S",
)
#: The system's own programs a unit may run besides the clone's (Debian's paths; merged /usr).
SYSTEM_TOOLS = ("/usr/bin/rm", "/usr/bin/mkdir", "/usr/bin/kill")
ASSIGNMENT = re.compile(r"^(#?)\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


# --- reading the files ----------------------------------------------------------------------------


def env_file(path: Path, *, commented: bool = False) -> dict[str, str]:
    """The assignments of an EnvironmentFile; with `commented`, also the "#NAME=default" lines."""
    found = {}
    for line in path.read_text().splitlines():
        match = ASSIGNMENT.match(line.strip())
        if match and (commented or not match[1]):
            found[match[2]] = match[3]
    return found


def unit(path: Path) -> dict[str, list[tuple[str, str]]]:
    """A unit file's sections, each a list of (key, value): keys may repeat (ExecStart=)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        assert current is not None, f"{path.name}: {line!r} outside a section"
        assert "=" in line and not line.endswith("\\"), f"{path.name}: {line!r}"
        key, _, value = line.partition("=")
        current.append((key.strip(), value.strip()))
    return sections


def values(sections, section: str, key: str) -> list[str]:
    return [value for name, value in sections.get(section, []) if name == key]


def one(sections, section: str, key: str) -> str:
    found = values(sections, section, key)
    assert len(found) == 1, f"{section}.{key}: {found}"
    return found[0]


def command_line(value: str) -> list[str]:
    """An Exec*= line as the program receives it: systemd's prefixes dropped, %H and %% expanded."""
    value = value.lstrip("-@:+!")
    assert not re.search(r"%[^H%]", value), f"a specifier the test does not expand: {value}"
    return shlex.split(value.replace("%H", socket.gethostname()).replace("%%", "%"))


def site() -> str:
    """The nginx site without its comments."""
    return "\n".join(line.split("#", 1)[0] for line in SITE.read_text().splitlines())


def location(text: str, prefix: str) -> str:
    match = re.search(r"location\s+(?:=\s*)?" + re.escape(prefix) + r"\s*\{([^}]*)\}", text)
    assert match, f"no location {prefix}"
    return match[1]


def directives(text: str, name: str) -> list[str]:
    return [value.strip() for value in re.findall(rf"(?m)^\s*{name}\s+([^;]*);", text)]


@functools.cache
def variables_read_by_the_code() -> frozenset[str]:
    """Every environment variable Yardstick's own modules read: os.environ.get("X"), os.getenv("X"),
    os.environ["X"], "X" in os.environ, env_flag("X"), a module-level constant as the name."""
    names: set[str] = set()
    skip = {"node_modules", "tests", "perf", "var", "examples", "docs", "static", "locale", "migrations"}
    sources = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if name not in skip and not name.startswith((".", "__"))]
        sources += [Path(folder) / name for name in files if name.endswith(".py")]
    for path in sources:
        tree = ast.parse(path.read_text(), filename=str(path))
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name) and isinstance(node.value.value, str)
        }

        def name_of(node, constants=constants) -> str | None:
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                return node.value
            if isinstance(node, ast.Name):
                return constants.get(node.id)
            return None

        def is_environ(node) -> bool:
            return isinstance(node, ast.Attribute) and node.attr == "environ"

        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                reads = (
                    (isinstance(func, ast.Attribute) and func.attr == "get" and is_environ(func.value))
                    or (isinstance(func, ast.Attribute) and func.attr == "getenv")
                    or (isinstance(func, ast.Name) and func.id == "env_flag")
                )
                if reads and (name := name_of(node.args[0])):
                    names.add(name)
            elif isinstance(node, ast.Subscript) and is_environ(node.value):
                if name := name_of(node.slice):
                    names.add(name)
            elif (
                isinstance(node, ast.Compare)
                and any(is_environ(c) for c in node.comparators)
                and (name := name_of(node.left))
            ):
                names.add(name)
    return frozenset(names)


def library_reads(name: str) -> bool:
    package, file_name = LIBRARY_VARIABLES[name]
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin, package
    return name in (Path(spec.origin).parent / file_name).read_text()


def role_of(sections) -> str:
    match = re.fullmatch(r"/etc/yardstick/([a-z-]+)\.env", one(sections, "Service", "EnvironmentFile"))
    assert match, one(sections, "Service", "EnvironmentFile")
    return match[1]


def exec_lines(sections) -> list[list[str]]:
    return [
        command_line(value)
        for key in ("ExecStartPre", "ExecStart", "ExecReload")
        for value in values(sections, "Service", key)
    ]


def clean_environment(tmp_path: Path, role: str) -> dict[str, str]:
    """A role's env file as a process gets it, its folders moved under tmp_path and a real key."""
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "LANG", "HOME", "SYSTEMROOT")}
    env.update(env_file(DEPLOY / "env" / f"{role}.env"))
    for name in ("MEDIA_ROOT", "YARDSTICK_UPLOADS_ROOT", "YARDSTICK_CHECKPOINT_DIR", "YARDSTICK_MODELS_DIR"):
        if name in env:
            env[name] = str(tmp_path / name.lower())
    env["YARDSTICK_VAR_DIR"] = str(tmp_path / "var")
    env["DJANGO_SECRET_KEY"] = secrets.token_urlsafe(50)
    env["DJANGO_SETTINGS_MODULE"] = "yardstick.settings"
    return env


# --- env files ------------------------------------------------------------------------------------


def test_the_deploy_folder_holds_an_env_file_per_role_and_a_unit_per_service():
    assert [path.name for path in ENV_FILES] == ["beat.env", "gpu-worker.env", "web.env", "worker.env"]
    assert [path.name for path in UNITS] == [
        "yardstick-beat.service",
        "yardstick-gpu-worker.service",
        "yardstick-migrate.service",
        "yardstick-web.service",
        "yardstick-worker.service",
    ]


def test_every_variable_an_env_file_names_is_one_the_code_reads():
    read = variables_read_by_the_code()
    # The scan itself finds what settings.py reads (a broken scan would pass anything).
    assert {"DATABASE_URL", "CACHE_URL", "DJANGO_SECURE_PROXY_SSL_HEADER", "YARDSTICK_BENCHMARKS"} <= read
    assert "PROMETHEUS_MULTIPROC_DIR" in read  # yardstick/metrics.py
    for path in ENV_FILES:
        named = env_file(path, commented=True)
        unknown = [
            name
            for name in named
            if name not in read and not (name in LIBRARY_VARIABLES and library_reads(name))
        ]
        assert unknown == [], f"{path.name} names variables nothing reads: {unknown}"


def test_each_host_names_what_it_needs_and_the_shared_values_agree():
    files = {path.stem: env_file(path) for path in ENV_FILES}
    for role in ("web", "worker", "gpu-worker"):
        for name in (
            "DJANGO_SECRET_KEY",
            "DATABASE_URL",
            "CELERY_BROKER_URL",
            "CACHE_URL",  # without it a worker's heartbeats never reach the web server
            "YARDSTICK_VAR_DIR",
            # Files in the bucket: the one thing besides the services a worker host needs to reach.
            "YARDSTICK_S3_BUCKET",
            "YARDSTICK_S3_ENDPOINT_URL",
            "YARDSTICK_S3_ACCESS_KEY_ID",
            "YARDSTICK_S3_SECRET_ACCESS_KEY",
            "YARDSTICK_WORKERS_ELSEWHERE",
            "YARDSTICK_MODELS_DIR",
        ):
            assert name in files[role], (role, name)
        # No local file folder is set: on a host of its own it would hold files no other host sees.
        assert not {"MEDIA_ROOT", "YARDSTICK_UPLOADS_ROOT", "YARDSTICK_CHECKPOINT_DIR"} & set(files[role]), (
            role
        )
        commented = env_file(DEPLOY / "env" / f"{role}.env", commented=True)
        assert {"YARDSTICK_SHARED_FOLDERS", "MEDIA_ROOT", "YARDSTICK_FILE_CACHE_DIR"} <= set(commented), role
    assert {"DJANGO_SECRET_KEY", "CELERY_BROKER_URL", "YARDSTICK_VAR_DIR"} <= set(files["beat"])
    web = files["web"]
    assert web["DJANGO_SECURE_PROXY_SSL_HEADER"] == "HTTP_X_FORWARDED_PROTO"
    accel = web["YARDSTICK_MEDIA_ACCEL_REDIRECT"]
    assert accel.startswith("/") and accel.endswith("/")
    assert web["YARDSTICK_METRICS_TOKEN"], "behind nginx every request comes from 127.0.0.1"
    assert web["DJANGO_CSRF_TRUSTED_ORIGINS"] == "https://" + web["DJANGO_ALLOWED_HOSTS"]
    assert web["CELERY_BROKER_URL"] != web["CACHE_URL"]
    for name in SHARED:
        given = {role: found[name] for role, found in files.items() if name in found}
        assert len(set(given.values())) <= 1, (name, given)
    # Nothing of a worker's belongs to the web host only, and no file says DEBUG.
    for role, found in files.items():
        assert "DJANGO_DEBUG" not in env_file(DEPLOY / "env" / f"{role}.env", commented=True), role
        if role != "web":
            assert not {"DJANGO_ALLOWED_HOSTS", "YARDSTICK_METRICS_TOKEN", "WEB_CONCURRENCY"} & set(found), (
                role
            )


def test_web_env_passes_check_deploy(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "DEBUG"],
        cwd=ROOT,
        env=clean_environment(tmp_path, "web"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


# --- systemd units --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", UNITS, ids=lambda path: path.name)
def test_each_unit_runs_the_installed_code_as_its_role_hardened(path):
    sections = unit(path)
    assert set(sections) <= {"Unit", "Service", "Install"}
    assert one(sections, "Unit", "Description")
    service = dict(sections["Service"])
    assert service["User"] == service["Group"] == "yardstick"
    assert service["WorkingDirectory"] == INSTALL
    role = role_of(sections)
    # Commented lines too: a site that keeps its files on a shared mount uncomments MEDIA_ROOT & co.
    env = env_file(DEPLOY / "env" / f"{role}.env", commented=True)
    for key, wanted in (
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("PrivateTmp", "yes"),
        ("ProtectHome", "yes"),
        ("UMask", "0027"),
    ):
        assert service.get(key) == wanted, (key, service.get(key))
    # Everything the process writes is in a read-write path: var/ and its role's shared folders.
    # ("-": a path that may be absent; the shared mount is, on a site with a bucket.)
    writable = [w.removeprefix("-") for w in " ".join(values(sections, "Service", "ReadWritePaths")).split()]
    for name in ("YARDSTICK_VAR_DIR", "MEDIA_ROOT", "YARDSTICK_UPLOADS_ROOT", "YARDSTICK_CHECKPOINT_DIR"):
        if name in env:
            assert any(env[name] == w or env[name].startswith(w.rstrip("/") + "/") for w in writable), name
    for path_ in writable:
        assert any(
            Path(path_) == Path(mounted) for mounted in one(sections, "Unit", "RequiresMountsFor").split()
        )
    # What the unit sets itself is read by the code or by a library it runs.
    for setting in values(sections, "Service", "Environment"):
        name = setting.partition("=")[0]
        assert name in variables_read_by_the_code() or (name in LIBRARY_VARIABLES and library_reads(name)), (
            name
        )
    # Programs from the clone's virtual environment, or the system's own tools.
    for argv in exec_lines(sections):
        program = argv[0]
        assert program.startswith(VENV_BIN + "/") or program in SYSTEM_TOOLS, argv
        if program == f"{VENV_BIN}/python":
            assert argv[1] == "manage.py", argv
    if path.name == "yardstick-migrate.service":
        assert service["Type"] == "oneshot" and "RemainAfterExit" not in service  # runs again at each start
        assert "Install" not in sections  # started by the web unit, never on its own at boot
        return
    assert service["Restart"] in ("on-failure", "always")
    assert one(sections, "Install", "WantedBy") == "multi-user.target"
    # A graceful stop: SIGTERM to the main process alone (gunicorn's master, Celery's main process
    # stop their own children), then a deadline.
    assert service["KillMode"] == "mixed" and service["KillSignal"] == "SIGTERM"
    assert service["TimeoutStopSec"]


def test_the_web_unit_migrates_first_and_empties_the_metrics_folder():
    web = unit(DEPLOY / "systemd" / "yardstick-web.service")
    assert "yardstick-migrate.service" in one(web, "Unit", "Requires").split()
    assert "yardstick-migrate.service" in one(web, "Unit", "After").split()
    environment = dict(value.split("=", 1) for value in values(web, "Service", "Environment"))
    folder = environment["PROMETHEUS_MULTIPROC_DIR"]
    runtime = one(web, "Service", "RuntimeDirectory")
    assert folder.startswith(f"/run/{runtime}/")  # removed by systemd at each stop
    assert ["/usr/bin/rm", "-rf", folder] in exec_lines(web)[:2]
    migrate = unit(DEPLOY / "systemd" / "yardstick-migrate.service")
    steps = [argv[2] for argv in exec_lines(migrate)]
    assert steps == ["check", "migrate", "collectstatic"]
    assert role_of(migrate) == "web"


def test_worker_units_cover_every_queue_with_named_workers():
    from django.conf import settings

    queues: dict[str, list[str]] = {}
    names = []
    for name in ("yardstick-worker.service", "yardstick-gpu-worker.service"):
        argv = command_line(one(unit(DEPLOY / "systemd" / name), "Service", "ExecStart"))
        consumed = argv[argv.index("-Q") + 1].split(",")
        queues[name] = consumed
        names.append(next(arg for arg in argv if arg.startswith("--hostname=")))
    assert queues["yardstick-worker.service"] == ["celery", "imports"]
    assert queues["yardstick-gpu-worker.service"] == ["gpu"]
    assert sorted(q for found in queues.values() for q in found) == sorted(
        q.name for q in settings.CELERY_TASK_QUEUES
    )
    # Two workers on one host must not share a name: their signs of life are kept under it.
    assert len(set(names)) == 2
    gpu = command_line(one(unit(DEPLOY / "systemd" / "yardstick-gpu-worker.service"), "Service", "ExecStart"))
    assert "--concurrency=1" in gpu
    # The GPU worker sees the GPU's devices; the others get a private /dev.
    assert "PrivateDevices" not in dict(unit(DEPLOY / "systemd" / "yardstick-gpu-worker.service")["Service"])


def celery_parse(argv: list[str]):
    """Celery's own command-line parsing (click), without running the command."""
    from celery.bin.base import CLIContext
    from celery.bin.celery import celery as cli

    from yardstick.celery import app

    context = cli.make_context(
        "celery", list(argv), obj=CLIContext(app=app, no_color=True, workdir=None, quiet=True)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # click 8.2+: protected_args
        rest = [*context.protected_args, *context.args]
    name, command, rest = cli.resolve_command(context, rest)
    return name, command.make_context(name, rest, parent=context).params


def gunicorn_parse(argv: list[str]):
    """gunicorn's own option parser and setting validators."""
    from gunicorn.config import Config

    config = Config(usage="%(prog)s [OPTIONS] [APP_MODULE]", prog="gunicorn")
    parsed = config.parser().parse_args(argv)
    for key, value in vars(parsed).items():
        if value is not None and key != "args":
            config.set(key.lower(), value)
    return config, parsed.args


def test_every_command_line_is_one_its_program_accepts():
    from django.core.management import get_commands, load_command_class

    seen = set()
    for path in UNITS:
        for argv in exec_lines(unit(path)):
            program = Path(argv[0]).name
            if program == "celery":
                name, params = celery_parse(argv[1:])
                assert argv[1:3] == ["-A", "yardstick"] and name in ("worker", "beat"), argv
                assert params["loglevel"] == 20  # INFO
            elif program == "gunicorn":
                config, rest = gunicorn_parse(argv[1:])
                assert rest == ["yardstick.wsgi"]
                assert config.control_socket_disable  # no socket in a home the unit cannot write
                assert config.accesslog == "-"
            elif program == "python":
                name, *arguments = argv[2:]
                command = load_command_class(get_commands()[name], name)
                command.create_parser("manage.py", name).parse_args(arguments)
            seen.add(program)
    assert {"celery", "gunicorn", "python"} <= seen


def test_gunicorn_loads_the_app_with_the_web_units_options(tmp_path):
    argv = command_line(one(unit(DEPLOY / "systemd" / "yardstick-web.service"), "Service", "ExecStart"))
    program = ROOT / ".venv" / "bin" / "gunicorn"
    if not program.exists():
        program = Path(sys.executable).parent / "gunicorn"
    result = subprocess.run(
        [str(program), *argv[1:], "--check-config"],
        cwd=ROOT,
        env=clean_environment(tmp_path, "web"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze not installed")
def test_systemd_analyze_verify_accepts_the_units(tmp_path):
    # The units point at the clone's .venv; here that is this checkout's (or this interpreter's).
    venv_bin = ROOT / ".venv" / "bin"
    if not (venv_bin / "gunicorn").exists():
        venv_bin = Path(sys.executable).parent
    for path in UNITS:
        (tmp_path / path.name).write_text(path.read_text().replace(VENV_BIN, str(venv_bin)))
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *sorted(str(p) for p in tmp_path.glob("*.service"))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Unknown keys or bad values are only warnings, so any output at all is a failure.
    assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), (
        result.stdout + result.stderr
    )


# --- nginx ----------------------------------------------------------------------------------------


def test_the_nginx_site_agrees_with_web_env_and_the_web_unit():
    text = site()
    # MEDIA_ROOT as a site on a shared mount sets it (with a bucket, media never comes from disk).
    web = env_file(DEPLOY / "env" / "web.env", commented=True)
    # Media only through the app: the internal location X-Accel-Redirect names, at MEDIA_ROOT.
    protected = location(text, web["YARDSTICK_MEDIA_ACCEL_REDIRECT"])
    assert re.search(r"(?m)^\s*internal;", protected)
    assert directives(protected, "alias") == [web["MEDIA_ROOT"].rstrip("/") + "/"]
    # The headers X-Accel-Redirect drops are set again as yardstick/media.py sets them.
    assert "add_header X-Content-Type-Options nosniff always" in protected
    assert "add_header Content-Security-Policy \"sandbox; default-src 'none'\" always" in protected
    # Static files from STATIC_ROOT; nothing else served from disk but those two.
    static = location(text, "/static/")
    assert directives(static, "alias") == [web["YARDSTICK_VAR_DIR"].rstrip("/") + "/static/"]
    aliases = [a.rstrip("/") for a in directives(text, "alias")]
    for name in ("MEDIA_ROOT", "YARDSTICK_UPLOADS_ROOT"):
        others = [a for a in aliases if a == web[name].rstrip("/")]
        assert len(others) == (1 if name == "MEDIA_ROOT" else 0), (name, aliases)
    assert not [root for root in directives(text, "root") if root.startswith(("/srv", web["MEDIA_ROOT"]))]
    # Uploads: three files (data, scenes, images) of YARDSTICK_MAX_UPLOAD_MB each.
    limit = env_file(DEPLOY / "env" / "web.env", commented=True).get("YARDSTICK_MAX_UPLOAD_MB", "1024")
    (body,) = directives(text, "client_max_body_size")
    assert body.endswith("m") and int(body[:-1]) >= 3 * int(limit), body
    # The proxy sets the header DJANGO_SECURE_PROXY_SSL_HEADER names, and the client address header.
    assert "X-Forwarded-Proto $scheme" in directives(text, "proxy_set_header")
    assert "X-Real-IP $remote_addr" in directives(text, "proxy_set_header")
    # Its own request id, which the app logs and sends back (yardstick/logs.py).
    assert "X-Request-ID $request_id" in directives(text, "proxy_set_header")
    assert web["YARDSTICK_CLIENT_IP_HEADER"] == "HTTP_X_REAL_IP"
    # The upstream is gunicorn's --bind, and nginx waits a little longer than gunicorn's timeout.
    config, _ = gunicorn_parse(
        command_line(one(unit(DEPLOY / "systemd" / "yardstick-web.service"), "Service", "ExecStart"))[1:]
    )
    upstream = re.search(r"upstream\s+yardstick_app\s*\{([^}]*)\}", text)[1]
    assert directives(upstream, "server")[0].split()[0] == config.bind[0]
    (read_timeout,) = directives(text, "proxy_read_timeout")
    assert int(read_timeout.rstrip("s")) > config.timeout
    # /metrics and /health/workers: this host only, unless an address is added.
    for prefix in ("/metrics", "/health/workers"):
        block = location(text, prefix)
        assert directives(block, "deny") == ["all"] and directives(block, "allow") == ["127.0.0.1", "::1"]
    # Plain HTTP only redirects (and answers ACME challenges); TLS 1.2 and 1.3 only.
    assert "return 301 https://$server_name$request_uri" in text
    assert directives(text, "ssl_protocols") == ["TLSv1.2 TLSv1.3"]


@pytest.mark.skipif(
    not shutil.which("nginx", path=os.environ.get("PATH", "") + ":/usr/sbin"), reason="nginx not installed"
)
@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl not installed")
def test_the_nginx_site_passes_nginx_t(tmp_path):
    nginx = shutil.which("nginx", path=os.environ.get("PATH", "") + ":/usr/sbin")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=yardstick.example.org", "-keyout", str(tmp_path / "key.pem")]
        + ["-out", str(tmp_path / "cert.pem")],
        check=True,
        capture_output=True,
        timeout=60,
    )
    text = SITE.read_text()
    certificates = re.findall(r"ssl_certificate(?:_key)?\s+(\S+);", text)
    assert len(certificates) == 2
    text = text.replace(certificates[0], str(tmp_path / "cert.pem"))
    text = text.replace(certificates[1], str(tmp_path / "key.pem"))
    (tmp_path / "yardstick.conf").write_text(text)
    mime_types = Path("/etc/nginx/mime.types")
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\nhttp {{\n"
        + (f"  include {mime_types};\n" if mime_types.exists() else "")
        + f"  client_body_temp_path {tmp_path}/body;\n  proxy_temp_path {tmp_path}/proxy;\n"
        + f"  access_log off;\n  include {tmp_path}/yardstick.conf;\n}}\n"
    )
    result = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")]
        + ["-e", str(tmp_path / "error.log")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr
    # nginx 1.25 and later warn that "listen ... http2" is deprecated ("http2 on;" is unknown to
    # Debian 12's 1.22); any other warning fails.
    warned = [line for line in result.stderr.splitlines() if "[warn]" in line and "http2" not in line]
    assert warned == [], result.stderr


# --- backups --------------------------------------------------------------------------------------


def run_backup(env: dict[str, str], dest: Path, keep: int = 2) -> Path:
    result = subprocess.run(
        ["bash", str(DEPLOY / "backup.sh"), "--dest", str(dest), "--keep", str(keep)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def shared_folders(tmp_path: Path) -> dict[str, str]:
    media = tmp_path / "media" / "datasets" / "1"
    media.mkdir(parents=True)
    (media / "a.png").write_bytes(b"\x89PNG picture")
    (tmp_path / "uploads" / "imports").mkdir(parents=True)
    (tmp_path / "uploads" / "imports" / "data.json").write_text("[]")
    return {
        "YARDSTICK_VAR_DIR": str(tmp_path / "var"),
        "MEDIA_ROOT": str(tmp_path / "media"),
        "YARDSTICK_UPLOADS_ROOT": str(tmp_path / "uploads"),
    }


def copied(backup: Path, folder: str, relative: str) -> Path | None:
    """A file of a backup's folder: from its rsync copy, or out of its tar."""
    if (backup / "files" / folder / relative).is_file():
        return backup / "files" / folder / relative
    archive = backup / f"{folder}.tar"
    if archive.is_file():
        import tarfile

        with tarfile.open(archive) as tar:
            names = [name.removeprefix("./") for name in tar.getnames()]
        return archive if relative in names else None
    return None


@pytest.mark.django_db
def test_backup_dumps_the_postgresql_database_and_copies_the_folders(tmp_path):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the test database is SQLite: backup.sh's pg_dump needs PostgreSQL (make test-postgres)")
    if not shutil.which("pg_dump") or not shutil.which("pg_restore"):
        pytest.skip("pg_dump and pg_restore not installed (Debian package postgresql-client)")
    database = connection.settings_dict
    url = (
        f"postgres://{database['USER']}"
        + (f":{database['PASSWORD']}" if database.get("PASSWORD") else "")
        + f"@{database['HOST'] or 'localhost'}:{database['PORT'] or 5432}/{database['NAME']}"
    )
    env = {"DATABASE_URL": url, **shared_folders(tmp_path)}
    first = run_backup(env, tmp_path / "backups")
    listing = subprocess.run(
        ["pg_restore", "--list", str(first / "database.dump")], capture_output=True, text=True, check=True
    ).stdout
    assert "TABLE public benchmarks_dataset" in listing and "TABLE DATA public auth_user" in listing
    assert copied(first, "media", "datasets/1/a.png") and copied(first, "uploads", "imports/data.json")
    manifest = (first / "MANIFEST").read_text()
    assert "database database.dump" in manifest and "finished" in manifest
    assert not database["PASSWORD"] or database["PASSWORD"] not in manifest


def test_backup_copies_an_embedded_sqlite_database_and_keeps_the_newest(tmp_path):
    env = shared_folders(tmp_path)
    (tmp_path / "var").mkdir()
    with sqlite3.connect(tmp_path / "var" / "yardstick.sqlite3") as db:
        db.execute("create table t (x)")
        db.execute("insert into t values (42)")
    db.close()
    made = []
    for _ in range(3):
        made.append(run_backup(env, tmp_path / "backups", keep=2))
        if len(made) < 3:  # one backup per second at most: its name is the time
            time.sleep(1.1)
    kept = sorted(path.name for path in (tmp_path / "backups").iterdir())
    assert kept == [made[1].name, made[2].name]  # the oldest went; no .partial left
    with sqlite3.connect(made[2] / "database.sqlite3") as copy:
        assert copy.execute("select x from t").fetchall() == [(42,)]
    copy.close()
    picture = copied(made[2], "media", "datasets/1/a.png")
    assert picture is not None
    if picture.name == "a.png":  # rsync: an unchanged file is a hard link to the previous backup's
        assert picture.stat().st_nlink == 2
    assert "folder checkpoints" in (made[2] / "MANIFEST").read_text()  # missing, said so


# --- the guide ------------------------------------------------------------------------------------


def test_the_guide_names_every_deploy_file_and_is_linked():
    guide = (ROOT / "docs" / "production.md").read_text()
    for path in sorted(DEPLOY.rglob("*")):
        if path.is_file():
            assert str(path.relative_to(ROOT)) in guide or path.name in guide, path
    assert f"python3 -m venv {INSTALL}/.venv" in guide or "python3 -m venv .venv" in guide
    assert "npm ci" in guide and "collectstatic" in guide and "check --deploy" in guide
    assert "docs/production.md" in (ROOT / "README.md").read_text()
    assert "production.md" in (ROOT / "docs" / "admin.md").read_text()
