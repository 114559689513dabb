"""A researcher at 1280 x 800 in headless Chromium: from the dataset list to a report, the add-a-
submission form offering the dataset's own settings, a taken name refused under its field, a row
renamed and another deleted after a confirmation; then the items, one after the other, in the
benchmark's own view with the JSON behind a toggle, STE-VQA answer labels beside the text they
outline, and a CLEVR-Ref+ item that fits the window. Screenshots go to var/screenshots/ (and
docs/screenshots/ with `make screenshots`)."""

import orjson
import pytest
from playwright.sync_api import expect

from benchmarks.services import import_dataset
from evaluation.services import submit_predictions
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 1280, 800


def keep(screenshot, name):
    for_docs(screenshot(name))


def fits_the_window(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH


def answers(dataset, keep=lambda idx: True) -> bytes:
    return orjson.dumps(
        {
            item.external_id: [
                {key: step[key] for key in ("obj_idx", "attr", "val")}
                for step in item.ground_truth["transformations"]
            ]
            for item in dataset.items.all()
            if keep(int(item.external_id))
        }
    )


def test_report_form_rename_delete_and_item_navigation(page, screenshot, tmp_path, trance_files):
    from plugins.clevrref.expressions import generate as clevrref_samples
    from plugins.stevqa.demo import generate_demo as stevqa_samples

    rita = make_user("rita", "researcher")
    trance = import_dataset(
        benchmark="trance",
        data=(trance_files / "data.jsonl").read_bytes(),
        name="demo",
        split="val",
        images_dir=trance_files,
    )
    submit_predictions(
        dataset=trance,
        name="Weak",
        data=answers(trance, lambda idx: idx % 3 == 0),
        setting="event",
        created_by=rita,
    )
    signs = import_dataset(
        benchmark="stevqa",
        data=stevqa_samples(tmp_path / "stevqa", count=2, seed=4).read_bytes(),
        name="demo",
        split="train",
        images_dir=tmp_path / "stevqa" / "images",
    )
    refs = clevrref_samples(tmp_path / "clevrref", images=1, seed=3, split="val")
    clevrref = import_dataset(
        benchmark="clevrref",
        data=refs.refexps_file.read_bytes(),
        name="demo",
        split="val",
        images_dir=refs.images_dir,
        scenes_data=refs.scenes_file.read_bytes(),
    )
    upload = tmp_path / "oracle.json"
    upload.write_bytes(answers(trance))
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    log_in(page, "rita", PASSWORD)

    # The dataset list names each dataset with its benchmark and links to its report.
    page.goto("/datasets/")
    expect(page.locator("#datasets .report-link")).to_have_count(3)
    keep(screenshot, "datasets-with-reports")
    page.click("a[aria-label='Report on TRANCE · demo']")
    expect(page.locator("h1")).to_contain_text("TRANCE · demo")

    # The form offers TRANCE's settings only, the first chosen, and its two metric variants (View
    # under every camera as the released evaluator, or one camera per answer), official first.
    options = page.locator("#id_setting option")
    expect(options).to_have_text(["Basic", "Event", "View"])
    expect(page.locator("#id_setting")).to_have_value("basic")
    expect(page.locator("#id_variant option")).to_have_count(2)
    expect(page.locator("#id_variant")).to_have_value("official")
    page.fill("#id_name", "Oracle")
    page.select_option("#id_setting", "event")
    page.set_input_files("#id_file", str(upload))
    page.click("#submission-form button[type=submit]")
    rows = page.locator("#report tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.locator("th")).to_have_text(["Oracle", "Weak"])
    fits_the_window(page)
    table = page.locator("#report").bounding_box()
    assert table["x"] + table["width"] <= WIDTH  # the View columns too
    # The legend sits under the bars, not over them.
    legend = page.locator(".plots svg #legend_1").first.bounding_box()
    axes = page.locator(".plots svg #patch_2").first.bounding_box()
    assert legend["y"] >= axes["y"] + axes["height"]
    keep(screenshot, "report-trance-form")

    # The same name in the same setting again: refused under the name field, nothing added.
    page.fill("#id_name", "Oracle")
    page.select_option("#id_setting", "event")
    page.set_input_files("#id_file", str(upload))
    page.click("#submission-form button[type=submit]")
    expect(page.locator("#submission-form")).to_contain_text(
        "TRANCE · demo already has a submission named 'Oracle' in the setting “Event”: choose another name"
    )
    expect(page.locator("#report tbody tr")).to_have_count(2)
    page.locator("#submission-form").scroll_into_view_if_needed()
    keep(screenshot, "report-name-taken")

    # Rename Oracle; a taken name is refused first.
    page.click("a[aria-label='Rename Oracle']")
    expect(page.locator("#id_name")).to_have_value("Oracle")
    page.fill("#id_name", "Weak")
    page.click("#rename-form button[type=submit]")
    expect(page.locator("#rename-form")).to_contain_text("already has a submission named 'Weak'")
    keep(screenshot, "report-rename")
    page.fill("#id_name", "Oracle (all steps)")
    page.click("#rename-form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("'Oracle' is now called 'Oracle (all steps)'.")
    expect(page.locator("#report tbody tr th")).to_have_text(["Oracle (all steps)", "Weak"])

    # Delete Weak: the confirmation says what goes with it; cancelling keeps it.
    page.click("a[aria-label='Delete Weak']")
    expect(page.locator("h1")).to_contain_text("Delete Weak?")
    expect(page.locator("#deleted-with-it")).to_contain_text("its 12 per-unit scores and the 4 answers")
    keep(screenshot, "report-delete")
    page.click("text=Cancel, keep it")
    expect(page.locator("#report tbody tr")).to_have_count(2)
    page.click("a[aria-label='Delete Weak']")
    page.click("#delete-form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("'Weak' and its answers and scores were deleted.")
    expect(page.locator("#report tbody tr th")).to_have_text(["Oracle (all steps)"])

    # The items, one after the other, in TRANCE's own view; the JSON behind a toggle.
    page.click("text=← TRANCE · demo")
    page.locator(".item-card").first.click()
    expect(page.locator("#item-pager")).to_contain_text("item 1 of 12")
    page.click("#next-item")
    expect(page.locator("#item-pager")).to_contain_text("item 2 of 12")
    expect(page.locator("h1")).to_contain_text("Item 1")
    expect(page.locator("#shown table tbody tr")).to_have_count(10)
    expect(page.locator("#truth")).to_contain_text("object")
    expect(page.locator("#payload")).to_be_hidden()
    page.click("#raw-json summary")
    expect(page.locator("#payload")).to_be_visible()
    expect(page.locator("#ground-truth")).to_contain_text("transformations")
    page.click("#raw-json summary")
    fits_the_window(page)
    keep(screenshot, "item-detail-trance")
    page.click("#previous-item")
    expect(page.locator("#item-pager")).to_contain_text("item 1 of 12")
    expect(page.locator("#previous-item")).to_have_count(0)

    # STE-VQA: each answer's label beside the text it outlines, never over a region.
    first_sign = signs.items.order_by("position").first()
    page.goto(f"/datasets/{signs.pk}/items/{first_sign.pk}/")
    expect(page.locator("svg.regions .region-label")).to_have_count(
        len(first_sign.ground_truth["annotation"])
    )
    keep(screenshot, "item-detail-stevqa")
    # In the image's own pixels: each outline's geometry (its stroke aside) and each label's backing.
    boxes = page.evaluate(
        """() => {
          const svg = document.querySelector("svg.regions");
          const box = (b) => ({x: b.x, y: b.y, width: b.width, height: b.height});
          return {
            regions: [...svg.querySelectorAll("polygon")].map((p) => box(p.getBBox())),
            labels: [...svg.querySelectorAll(".region-label rect")].map((r) => box(r.getBBox())),
          };
        }"""
    )
    for spot in boxes["labels"]:
        for region in boxes["regions"]:
            assert not (
                spot["x"] < region["x"] + region["width"]
                and region["x"] < spot["x"] + spot["width"]
                and spot["y"] < region["y"] + region["height"]
                and region["y"] < spot["y"] + spot["height"]
            ), f"a label at {spot} covers the outlined region {region}"
    fits_the_window(page)

    # CLEVR-Ref+: no wider than the window, the JSON open or not.
    first_ref = clevrref.items.order_by("position").first()
    page.goto(f"/datasets/{clevrref.pk}/items/{first_ref.pk}/")
    expect(page.locator("#truth")).to_contain_text("Refers to")
    fits_the_window(page)
    page.click("#raw-json summary")
    fits_the_window(page)
    page.click("#raw-json summary")
    keep(screenshot, "item-detail-clevrref")
