"""TranceNet's "tvr" layout (the TVR paper's, as its released code builds it) and its training
recipe; the "v1" layout of the shipped checkpoint still loads and trains."""

import pytest
import torch

from plugins.trance import metric
from plugins.trance.baselines import TranceNetBaseline, read_checkpoint
from plugins.trance.baselines.model import (
    END,
    OBJECT_FEATURES,
    PAIR_END,
    PAIRS,
    PaperCNN,
    PaperTranceNet,
    TranceNet,
    build_model,
    full_config,
    prepared_inputs,
)
from plugins.trance.baselines.training import Recipe, shifted, step_loss, targets
from plugins.trance.formats import BASIC, EVENT
from plugins.trance.spec import SPEC
from plugins.trance.tests.test_baselines import (  # noqa: F401  (tiny_folder is a fixture)
    TINY,
    answer,
    read_records,
    tiny_folder,
    units_of,
)


def batch_of(count, height=24, width=32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    initial = torch.randint(0, 256, (count, 3, height, width), generator=generator, dtype=torch.uint8)
    final = torch.randint(0, 256, (count, 3, height, width), generator=generator, dtype=torch.uint8)
    objects = torch.rand((count, 10, OBJECT_FEATURES), generator=generator)
    return prepared_inputs(initial, final, objects, "cpu")


# --- The layout ----------------------------------------------------------------------------------


def test_a_config_without_a_variant_is_v1_and_a_new_variant_is_checked():
    assert full_config({})["variant"] == "v1"
    assert isinstance(build_model({}), TranceNet)
    assert isinstance(build_model({"variant": "tvr"}), PaperTranceNet)
    with pytest.raises(ValueError, match="unknown variant"):
        full_config({"variant": "other"})


def test_the_paper_cnn_keeps_the_last_map_flattened():
    # 120x160 halves four times (floor) to 7x10; 64 channels.
    cnn = PaperCNN(6, 120, 160)
    assert cnn.out_features == 64 * 7 * 10
    assert cnn(torch.zeros(2, 6, 120, 160)).shape == (2, 64 * 7 * 10)
    kernels = [module.kernel_size for module in cnn.modules() if isinstance(module, torch.nn.Conv2d)]
    assert kernels == [(5, 5), (3, 3), (3, 3), (3, 3)]
    assert sum(isinstance(module, torch.nn.BatchNorm2d) for module in cnn.modules()) == 2


@pytest.mark.parametrize("encoder", ["cnn", "resnet18"])
@pytest.mark.parametrize("fusion", ["concat", "subtract"])
def test_the_paper_layout_scores_every_step_and_decodes_greedily(encoder, fusion):
    model = build_model({**TINY, "variant": "tvr", "encoder": encoder, "fusion": fusion})
    initial, final, objects = batch_of(3)
    target_objects = torch.tensor([[1, END, 0, 0, 0], [2, 3, END, 0, 0], [4, 5, 6, 7, END]])
    target_pairs = torch.tensor([[0, PAIR_END, 0, 0, 0], [1, 2, PAIR_END, 0, 0], [3, 4, 5, 6, PAIR_END]])
    object_scores, pair_scores = model(initial, final, objects, target_objects, target_pairs)
    assert object_scores.shape == (3, 5, 11)
    assert pair_scores.shape == (3, 5, len(PAIRS) + 1)
    model.eval()
    with torch.inference_mode():
        chosen_objects, chosen_pairs = model.decode(initial, final, objects, 4)
    assert chosen_objects.shape == chosen_pairs.shape == (3, 4)
    # The first step is always a step; later ones may be END (object END, pair 0).
    assert (chosen_objects[:, 0] < END).all()
    assert ((chosen_pairs >= 0) & (chosen_pairs < len(PAIRS))).all()


def test_the_paper_layout_reads_pixels_in_0_to_1_and_subtracts_final_from_initial():
    model = build_model({**TINY, "variant": "tvr", "fusion": "subtract"})
    seen = []
    model.encoder.register_forward_hook(lambda module, inputs, output: seen.append(inputs[0]))
    initial, final, objects = prepared_inputs(
        torch.full((1, 3, 24, 32), 255, dtype=torch.uint8), torch.zeros((1, 3, 24, 32), dtype=torch.uint8),
        torch.zeros(1, 10, OBJECT_FEATURES), "cpu",
    )  # fmt: skip
    model.eval()
    with torch.inference_mode():
        model.decode(initial, final, objects, 1)
    assert torch.allclose(seen[0], torch.ones_like(seen[0]))


def test_a_step_choosing_no_more_pairs_ends_the_answer():
    model = build_model({**TINY, "variant": "tvr"})
    with torch.no_grad():
        # Every step after the first prefers PAIR_END: the answers are one step long.
        model.pair_head[-1].bias[PAIR_END] = 1e4
    initial, final, objects = batch_of(4)
    model.eval()
    with torch.inference_mode():
        chosen_objects, _ = model.decode(initial, final, objects, 4)
    assert (chosen_objects[:, 0] < END).all() and (chosen_objects[:, 1:] == END).all()


# --- Training --------------------------------------------------------------------------------------


def test_targets_teach_the_end_pair_in_the_paper_layout(tiny_folder):  # noqa: F811
    from plugins.trance.baselines.training import read_folder

    examples = read_folder(tiny_folder)[:2]
    plain = targets(examples, 2)
    assert plain["pair_options"].shape[-1] == len(PAIRS)
    assert plain["pair_mask"][:, 1].tolist() == [False, False]
    with_end = targets(examples, 2, PAIR_END)
    assert with_end["pair_options"].shape[-1] == len(PAIRS) + 1
    assert with_end["objects"][:, 1].tolist() == [END, END]
    assert with_end["pairs"][:, 1].tolist() == [PAIR_END, PAIR_END]
    assert with_end["pair_mask"][:, 1].tolist() == [True, True]
    assert with_end["pair_options"][:, 1, PAIR_END].all()


def test_the_paper_recipe_divides_the_rate_by_ten_after_half_the_epochs():
    recipe = Recipe.of("tvr", 50)
    assert (recipe.decay_after, recipe.shift) == (25, 0.05)
    assert [recipe.learning_rate(1e-3, epoch) for epoch in (0, 24)] == [1e-3, 1e-3]
    assert recipe.learning_rate(1e-3, 25) == pytest.approx(1e-4)
    assert Recipe.of("tvr", 5).decay_after == 3
    assert Recipe.of("tvr", 1).decay_after is None
    assert Recipe.of("v1", 50) == Recipe(decay_after=None, shift=0.0)


def translated(image, dx, dy):
    """`image` (C, H, W) moved dx columns right and dy rows down, the uncovered border 0."""
    out = torch.zeros_like(image)
    height, width = image.shape[1:]
    for row in range(height):
        for column in range(width):
            if 0 <= row - dy < height and 0 <= column - dx < width:
                out[:, row, column] = image[:, row - dy, column - dx]
    return out


def test_a_shift_moves_both_images_alike_by_up_to_5_percent_and_fills_black():
    generator = torch.Generator().manual_seed(0)
    initial = torch.randint(1, 256, (16, 3, 20, 40), generator=generator, dtype=torch.uint8)
    final = torch.randint(1, 256, (16, 3, 20, 40), generator=generator, dtype=torch.uint8)
    moved_initial, moved_final = shifted(initial, final, 0.05, torch.Generator().manual_seed(1))
    # 5% of 40 x 20: up to 2 columns and 1 row either way, the same for a pair's two images.
    seen = set()
    for row in range(16):
        matches = [
            (dx, dy)
            for dx in range(-2, 3)
            for dy in range(-1, 2)
            if torch.equal(moved_initial[row], translated(initial[row], dx, dy))
            and torch.equal(moved_final[row], translated(final[row], dx, dy))
        ]
        assert len(matches) == 1, row
        seen.add(matches[0])
    assert len(seen) > 3
    unchanged = shifted(initial, final, 0.0, torch.Generator().manual_seed(1))
    assert torch.equal(unchanged[0], initial) and torch.equal(unchanged[1], final)


def test_the_paper_layout_learns_a_fixed_batch():
    torch.manual_seed(0)
    model = build_model({**TINY, "variant": "tvr"})
    initial, final, objects = batch_of(8)
    from plugins.trance.baselines.training import Example

    steps = [{"obj_idx": n % 10, "attr": "color", "val": "red"} for n in range(8)]
    examples = [Example({"transformations": [step] * (1 + n % 3)}, "", "") for n, step in enumerate(steps)]
    batch = targets(examples, 4, PAIR_END)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(30):
        object_scores, pair_scores = model(initial, final, objects, batch["objects"], batch["pairs"])
        loss = step_loss(object_scores, pair_scores, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]


def test_a_tiny_training_of_the_paper_layout_round_trips_through_its_checkpoint(tiny_folder, tmp_path):  # noqa: F811
    out = tmp_path / "tvr.pt"
    trained = TranceNetBaseline(SPEC).train(
        data=tiny_folder, out=out, epochs=4, batch_size=4, seed=2, config=TINY, val=tiny_folder,
        log=lambda line: None,
    )  # fmt: skip
    assert [line["lr"] for line in trained["history"]] == pytest.approx([1e-3, 1e-3, 1e-4, 1e-4])
    assert (trained["lr_decay_after"], trained["shift"]) == (2, 0.05)
    assert all(line["seconds"] >= 0 for line in trained["history"])
    losses = [line["loss"] for line in trained["history"]]
    assert losses[-1] < losses[0]
    checkpoint = read_checkpoint(out)
    assert checkpoint["config"]["variant"] == "tvr"
    model = checkpoint["loaded_model"]
    assert isinstance(model, PaperTranceNet)
    saved = torch.load(out, weights_only=True)["state_dict"]
    assert all(torch.equal(saved[key], value) for key, value in model.state_dict().items())
    records = read_records(tiny_folder)
    units = units_of(records, tiny_folder)
    baseline = TranceNetBaseline(SPEC)
    basic = answer(baseline, units, BASIC, checkpoint=out)
    assert baseline.parameters()["variant"] == "tvr"
    assert all(len(steps) == 1 for steps in basic.values())
    assert basic == answer(TranceNetBaseline(SPEC), units, BASIC, checkpoint=out)
    event = answer(TranceNetBaseline(SPEC), units, EVENT, checkpoint=out)
    assert all(1 <= len(steps) <= 4 for steps in event.values())
    assert metric.score_event(records, event).summary["n"] == len(records)


def test_a_v1_checkpoint_without_a_variant_resumes_as_v1(tiny_folder, tmp_path):  # noqa: F811
    first = tmp_path / "v1.pt"
    TranceNetBaseline(SPEC).train(
        data=tiny_folder, out=first, epochs=1, batch_size=6, config={**TINY, "variant": "v1"},
        log=lambda line: None,
    )  # fmt: skip
    old = torch.load(first, weights_only=True)
    del old["config"]["variant"]  # as the files written before the "tvr" layout
    torch.save(old, first)
    assert isinstance(read_checkpoint(first)["loaded_model"], TranceNet)
    more = TranceNetBaseline(SPEC).train(
        data=tiny_folder,
        out=tmp_path / "more.pt",
        epochs=1,
        batch_size=6,
        resume=first,
        log=lambda line: None,
    )
    assert more["epochs"] == 2 and (more["lr_decay_after"], more["shift"]) == (None, 0.0)
    assert torch.load(tmp_path / "more.pt", weights_only=True)["config"]["variant"] == "v1"


def test_the_shipped_checkpoint_is_the_v1_layout():
    checkpoint = read_checkpoint(TranceNetBaseline.default_checkpoint)
    assert "variant" not in checkpoint["config"]
    assert isinstance(checkpoint["loaded_model"], TranceNet)
    assert checkpoint["loaded_model"].config["variant"] == "v1"
