"""TranceNet on a CUDA GPU: the same answers as on the CPU (float16 autocast, channels-last), and
training steps that learn. Skipped without a GPU; scripts/gpu-check.sh runs them on a GPU machine."""

import pytest

torch = pytest.importorskip("torch")

from plugins.trance.baselines import TranceNetBaseline  # noqa: E402
from plugins.trance.formats import BASIC, EVENT, VIEW  # noqa: E402
from plugins.trance.generator import generate  # noqa: E402
from plugins.trance.spec import SPEC  # noqa: E402
from plugins.trance.tests.test_baselines import TINY, answer, read_records, units_of  # noqa: E402

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(
        not torch.cuda.is_available(), reason="needs a CUDA GPU: scripts/gpu-check.sh runs these there"
    ),
]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trance-cuda")
    generate(folder, count=24, seed=4, workers=2)
    return folder


@pytest.mark.parametrize("setting", [BASIC, EVENT, VIEW])
def test_the_shipped_model_answers_on_cuda_as_on_the_cpu(rendered, setting):
    records = read_records(rendered)
    if setting == BASIC:
        records = [record for record in records if len(record["transformations"]) == 1] or records[:1]
    units = units_of(records, rendered)
    on_cpu = answer(TranceNetBaseline(SPEC), units, setting, device="cpu")
    on_gpu = answer(TranceNetBaseline(SPEC), units, setting, device="cuda", workers=2)
    same = sum(on_cpu[key] == on_gpu[key] for key in on_cpu)
    # float16 may flip a near tie between two choices; more than one answer in twenty is a bug.
    assert same >= 0.95 * len(on_cpu), f"{same} of {len(on_cpu)} answers agree"


def test_training_on_cuda_learns_and_writes_a_checkpoint_the_cpu_reads(rendered, tmp_path):
    out = tmp_path / "cuda.pt"
    trained = TranceNetBaseline(SPEC).train(
        data=rendered,
        out=out,
        epochs=3,
        batch_size=8,
        seed=1,
        config=TINY,
        device="cuda",
        log=lambda line: None,
    )
    losses = [line["loss"] for line in trained["history"]]
    assert losses[-1] < losses[0]
    units = units_of(read_records(rendered), rendered)
    assert len(answer(TranceNetBaseline(SPEC), units, EVENT, checkpoint=out, device="cpu")) == len(units)
