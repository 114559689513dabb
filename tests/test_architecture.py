"""The rules the code's shape keeps, read from the source itself.

Layers only call downward: pure core (specs, records, metrics' shared parts, statistics) <
accounts, jobs (the job mechanism: status, heartbeat, reaper, queueing by name) < benchmarks (catalog) < evaluation < humantest, annotation, inference (siblings, apart)
< validation (on the annotation queue) < plugins (one folder per benchmark, found through the
registry) < yardstick (project). A Celery tasks module is imported by nothing it imports (work
is queued by the task's name, jobs.services.enqueue), so no module and its tasks import each
other. Pure modules import no Django, DRF or Celery; in a benchmark's
folder every module is pure but the pieces it plugs into the apps (trial, check, authoring,
management commands). No app imports a benchmark's folder, pure or not.
And one place per benchmark: a benchmark's name is written only in its own folder, never in
another module's if-chain.

Each checker takes {module name: source} so the tests below can show that it catches a break.
"""

import ast
import re
import subprocess
from pathlib import Path

import pytest

from benchmarks import registry

ROOT = Path(__file__).resolve().parents[1]
APPS = (
    "accounts",
    "jobs",
    "benchmarks",
    "evaluation",
    "humantest",
    "annotation",
    "inference",
    "validation",
    "plugins",
    "yardstick",
)
RANKS = {
    "accounts": 1,
    "jobs": 1,
    "benchmarks": 2,
    "evaluation": 3,
    "humantest": 4,
    "annotation": 4,
    "inference": 4,
    "validation": 5,
    "plugins": 6,
    "yardstick": 7,
}
FRAMEWORKS = ("django", "rest_framework", "drf_spectacular", "celery", "kombu")
#: Pure modules: the catalog's plain-data core, every module of a benchmark's folder but the pieces
#: it plugs into the apps, the metrics and the statistics.
PURE = (
    re.compile(r"benchmarks\.(spec|registry|records(\.[a-z_]+)?)$"),
    re.compile(r"plugins(\.[a-z_]+)?$"),
    re.compile(r"plugins\.[a-z_]+\.(?!trial$|check$|authoring$|apps$|management\b|tests\b)[a-z_.]+$"),
    re.compile(r"evaluation\.metrics(\..+)?$"),
    re.compile(r"evaluation\.(agreement|sampling|reports(\.[a-z_]+)?|plots|comparison)$"),
    re.compile(r"annotation\.problems$"),
    re.compile(r"validation\.(estimates|plots)$"),
    re.compile(r"inference\.baselines(\..+)?$"),
    re.compile(r"inference\.(plugins|served)$"),
)


def is_pure(module: str) -> bool:
    return any(pattern.match(module) for pattern in PURE)


def project_sources() -> dict[str, str]:
    """Every Python module of the apps (migrations aside: they name models by strings)."""
    sources = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            relative = path.relative_to(ROOT)
            if "migrations" in relative.parts:
                continue
            module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
            sources[module] = path.read_text()
    return sources


def imports_of(source: str, known: set[str]) -> set[str]:
    """Every module a source imports, at the top or inside a function (`from a import b` names
    the module a.b when there is one, else a)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.add(full if full in known else node.module)
    return names


def layer_violations(sources: dict[str, str]) -> list[str]:
    known = set(project_sources()) | set(sources)
    problems = []
    for module, source in sorted(sources.items()):
        app = module.split(".")[0]
        for imported in sorted(imports_of(source, known)):
            top = imported.split(".")[0]
            if top == "plugins" and RANKS[app] < RANKS[top]:
                # A benchmark's folder sits above the apps, its pure modules too: apps reach it
                # only through the registry, never by importing it.
                problems.append(f"{module} ({app}) imports {imported}, a benchmark's folder (plugins)")
            elif is_pure(module):
                if top in FRAMEWORKS:
                    problems.append(f"{module} is pure but imports {imported}")
                elif top in APPS and not is_pure(imported):
                    problems.append(f"{module} is pure but imports {imported}, which is not")
            elif top in APPS and top != app and not is_pure(imported):
                if RANKS[top] > RANKS[app]:
                    problems.append(f"{module} ({app}) imports {imported}, a higher layer ({top})")
                elif RANKS[top] == RANKS[app]:
                    problems.append(f"{module} ({app}) imports {imported}, from a sibling app ({top})")
    return problems


def task_loops(sources: dict[str, str]) -> list[str]:
    """Modules that import a tasks module which imports them back (directly or through its
    lazy imports): the loop that queueing by name removes."""
    known = set(project_sources()) | set(sources)
    imports = {module: imports_of(source, known) for module, source in sources.items()}
    problems = []
    for tasks in sorted(module for module in sources if module.endswith(".tasks")):
        for imported in sorted(imports[tasks]):
            if tasks in imports.get(imported, ()):
                problems.append(f"{imported} imports {tasks}, which imports it back")
    return problems


def own_modules(name: str) -> tuple[str, ...]:
    """Where a benchmark's name may be written: its own folder."""
    return (f"plugins/{name}/",)


def name_violations(files: dict[str, str], names: dict[str, str]) -> list[str]:
    """Code or templates that write a benchmark's name (or alias) as a value outside its own modules.

    `names`: name or alias -> the benchmark it belongs to. In Python every string constant is
    checked (docstrings and comments are prose, not constants compared against); in templates
    and scripts, quoted names.
    """
    problems = []
    for path, text in sorted(files.items()):
        if path.endswith(".py"):
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
            }
            found = [
                (node.lineno, node.value)
                for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and node.value.lower() in names
            ]
        else:
            found = [
                (text.count("\n", 0, match.start()) + 1, match.group(2))
                for match in re.finditer(r"([\"'])([\w+\-]+)\1", text)
                if match.group(2).lower() in names
            ]
        for line, value in found:
            benchmark = names[value.lower()]
            if not path.startswith(own_modules(benchmark)):
                problems.append(f"{path}:{line} names {benchmark} ({value!r}) outside its own modules")
    return problems


def source_files() -> dict[str, str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {
        path: (ROOT / path).read_text()
        for path in [*listed, *untracked]
        if path.split("/")[0] in APPS + ("templates", "static")
        and "/migrations/" not in path
        and path.endswith((".py", ".html", ".js"))
        and (ROOT / path).is_file()
    }


def benchmark_names() -> dict[str, str]:
    return {alias.lower(): spec.name for spec in registry.specs() for alias in (spec.name, *spec.aliases)}


def test_layers_only_call_downward_and_pure_modules_import_no_framework():
    problems = layer_violations(project_sources())
    assert not problems, "\n".join(problems)


def test_the_layer_check_catches_each_kind_of_break():
    planted = {
        "evaluation.metrics.fake": "import numpy\nfrom django.db import models\n",
        "plugins.trance.fake": "def later():\n    from benchmarks.models import Dataset\n",
        "benchmarks.views_fake": "from humantest.models import TestPlan\n",
        "evaluation.fake": "from evaluation.metrics import cric\nfrom benchmarks.models import Dataset\n",
        "humantest.fake": "from annotation import models\n",
        "humantest.fine": "from evaluation.services import record_prediction\nfrom accounts.roles import TESTER\n",
        "accounts.fake": "from benchmarks.models import Dataset\n",
        "evaluation.reads_a_folder": "from plugins.cric import metric\n",
        "plugins.cric.trial": "from humantest.trials.base import Trial\nfrom django.db import models\n",
    }
    assert layer_violations(planted) == [
        "accounts.fake (accounts) imports benchmarks.models, a higher layer (benchmarks)",
        "benchmarks.views_fake (benchmarks) imports humantest.models, a higher layer (humantest)",
        "evaluation.metrics.fake is pure but imports django.db",
        "evaluation.reads_a_folder (evaluation) imports plugins.cric.metric, a benchmark's folder (plugins)",
        "humantest.fake (humantest) imports annotation.models, from a sibling app (annotation)",
        "plugins.trance.fake is pure but imports benchmarks.models, which is not",
    ]


def test_no_module_and_its_celery_tasks_import_each_other():
    problems = task_loops(project_sources())
    assert not problems, "\n".join(problems)


def test_the_loop_check_catches_a_service_importing_its_tasks():
    planted = {
        "evaluation.fake_tasks_user": "def later():\n    from evaluation.fake.tasks import go\n",
        "evaluation.fake.tasks": "from evaluation.fake_tasks_user import work\n",
        "evaluation.fine.tasks": "from evaluation.services import run_scoring_job\n",
    }
    assert task_loops(planted) == [
        "evaluation.fake_tasks_user imports evaluation.fake.tasks, which imports it back"
    ]


def test_a_benchmark_is_named_only_in_its_own_modules():
    problems = name_violations(source_files(), benchmark_names())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("path", "text", "found"),
    [
        (
            "evaluation/plots.py",
            'if benchmark == "trance":\n    pass\n',
            "evaluation/plots.py:1 names trance",
        ),
        ("evaluation/x.py", 'KINDS = {"cric": 1}\n', "evaluation/x.py:1 names cric"),
        (
            "humantest/y.py",
            'def f(spec):\n    return spec.name in ("ste-vqa", "x")\n',
            "humantest/y.py:2 names stevqa",
        ),
        ("templates/z.html", '{% if b == "clevrref" %}x{% endif %}', "templates/z.html:1 names clevrref"),
    ],
)
def test_the_name_check_catches_an_if_chain(path, text, found):
    problems = name_violations({path: text}, benchmark_names())
    assert len(problems) == 1 and problems[0].startswith(found)


def test_the_name_check_leaves_a_benchmarks_own_modules_and_prose_alone():
    own = {
        "plugins/trance/spec.py": 'name = "trance"\n',
        "plugins/cric/trial.py": '"""About cric."""\nX = "cric"\n',
        "evaluation/x.py": '"""The trance and cric metrics share this."""\n',
    }
    assert name_violations(own, benchmark_names()) == []
